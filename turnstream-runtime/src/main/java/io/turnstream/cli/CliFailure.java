package io.turnstream.cli;

/**
 * A failure the user can act on: reported as one line on stderr with no stack trace, and the
 * process exits with {@link #exitCode()}.
 */
public final class CliFailure extends RuntimeException {

    private final int exitCode;

    public CliFailure(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public CliFailure(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }
}
