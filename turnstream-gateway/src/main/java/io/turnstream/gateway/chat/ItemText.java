package io.turnstream.gateway.chat;

/**
 * One streaming item's text as the UI message stream has it, built by the append rule: an upsert's
 * content extends the text when it starts with it; an append extends it when its offset (code points)
 * is at or before the text's end, contributing what lies past the end; a gap waits for the next upsert.
 * Text once sent cannot be taken back, so an upsert that disagrees with it changes nothing.
 */
public final class ItemText {

    private final StringBuilder text = new StringBuilder();
    /** The text's length in code points. */
    private long length;
    /** The part's start was sent (its kind is known from an upsert). */
    public boolean started;
    /** The part's end was sent. */
    public boolean ended;

    /** Takes an upsert's content; returns the text it adds ("" when nothing). */
    public String upsert(String content) {
        if (content == null || content.length() <= text.length() || !content.startsWith(text.toString())) {
            return "";
        }
        return add(content.substring(text.length()));
    }

    /** Takes an append; returns the text it adds ("" when already covered, or on a gap). */
    public String append(long offset, String more) {
        if (offset > length) {
            return "";
        }
        long covered = length - offset;
        int available = more.codePointCount(0, more.length());
        if (covered >= available) {
            return "";
        }
        return add(more.substring(more.offsetByCodePoints(0, (int) covered)));
    }

    public String text() {
        return text.toString();
    }

    private String add(String fresh) {
        text.append(fresh);
        length += fresh.codePointCount(0, fresh.length());
        return fresh;
    }
}
