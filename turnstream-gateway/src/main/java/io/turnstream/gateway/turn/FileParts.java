package io.turnstream.gateway.turn;

import io.turnstream.gateway.http.ApiError;
import io.turnstream.gateway.provider.Conversation;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * Reads and checks a file attached to a user message, in whichever shape the route takes it (the native
 * {@code files}, the AI SDK's {@code file} part, OpenAI's {@code image_url}/{@code file}/{@code input_image}/
 * {@code input_file} parts). An inline file becomes a {@code data:} URL; every problem is a 400 that says what to fix.
 * The limits follow from where a file goes: the whole request travels as one record on {@code llm.turn-requests}
 * (1 MiB by default), and every provider takes these media types.
 */
public final class FileParts {

    /** The most bytes one file may hold, decoded: the rest of the request and its headers fit in a Kafka record. */
    public static final int MAX_FILE_BYTES = 512 * 1024;
    public static final List<String> MEDIA_TYPES = List.of("image/png", "image/jpeg", "image/gif", "image/webp",
            "application/pdf");
    /** The media type of an image given by URL without one (OpenAI's {@code image_url}): the providers look. */
    public static final String SOME_IMAGE = "image/*";

    private FileParts() {
    }

    /**
     * A file given by URL: a {@code data:} URL holding it, or an {@code https} URL (images only).
     *
     * @param mediaType the type the client gave, or null to take the data URL's
     */
    public static Conversation.FilePart fromUrl(String where, String url, String mediaType, String filename) {
        if (url == null || url.isBlank()) {
            throw ApiError.badRequest(where + " needs the file: a data: URL (base64) or an https URL");
        }
        if (url.regionMatches(true, 0, "data:", 0, 5)) {
            int comma = url.indexOf(',');
            String header = comma < 0 ? "" : url.substring(5, comma).toLowerCase(Locale.ROOT);
            if (comma < 0 || !header.endsWith(";base64")) {
                throw ApiError.badRequest(where + " must be a base64 data: URL (data:<media type>;base64,<data>)");
            }
            String declared = header.substring(0, header.indexOf(';'));
            if (mediaType != null && !declared.isEmpty() && !declared.equalsIgnoreCase(mediaType)) {
                throw ApiError.badRequest(where + " says media type " + mediaType + " but its data: URL says " + declared);
            }
            return fromBase64(where, url.substring(comma + 1), mediaType != null ? mediaType : declared, filename);
        }
        if (!url.regionMatches(true, 0, "https://", 0, 8)) {
            throw ApiError.badRequest(where + " must be a data: URL (base64) or an https URL");
        }
        String type = mediaType == null ? SOME_IMAGE : checkedType(where, mediaType);
        if (!type.startsWith("image/")) {
            throw ApiError.badRequest(where + " is a " + type + " by URL: send a document inline (a data: URL or "
                    + "base64 data); only images can be given by URL, as not every provider fetches documents");
        }
        return new Conversation.FilePart(type, url, filename);
    }

    /** A file given as base64 data with its media type. */
    public static Conversation.FilePart fromBase64(String where, String base64, String mediaType, String filename) {
        if (mediaType == null || mediaType.isBlank()) {
            throw ApiError.badRequest(where + " needs its media type (one of " + String.join(", ", MEDIA_TYPES) + ")");
        }
        String type = checkedType(where, mediaType);
        if (base64 == null || base64.isBlank()) {
            throw ApiError.badRequest(where + " holds no data");
        }
        int bytes;
        try {
            bytes = Base64.getDecoder().decode(base64).length;
        } catch (IllegalArgumentException e) {
            throw ApiError.badRequest(where + " is not valid base64: " + e.getMessage());
        }
        if (bytes > MAX_FILE_BYTES) {
            throw ApiError.badRequest(where + " is " + bytes + " bytes; a file may hold at most " + MAX_FILE_BYTES
                    + " bytes (the request travels as one Kafka record)");
        }
        return new Conversation.FilePart(type, "data:" + type + ";base64," + base64, filename);
    }

    private static String checkedType(String where, String mediaType) {
        String type = mediaType.toLowerCase(Locale.ROOT).trim();
        if (!MEDIA_TYPES.contains(type)) {
            throw ApiError.badRequest(where + " has media type '" + mediaType + "'; the gateway takes "
                    + String.join(", ", MEDIA_TYPES));
        }
        return type;
    }
}
