package io.turnstream.model;

/** {@code {code, message, stack?}}: the error object of StreamEvents, turn events and tool results. */
public record ErrorInfo(String code, String message, String stack) {

    public static ErrorInfo of(String code, String message) {
        return new ErrorInfo(code, message, null);
    }
}
