package io.turnstream.cli;

/** Exit codes of every subcommand, so that scripts and process supervisors can tell failures apart. */
public final class ExitCodes {

    public static final int OK = 0;
    /** The service failed while running (for example stream processing could not continue). */
    public static final int FAILURE = 1;
    /** Bad or missing command-line arguments (picocli's own code for usage errors). */
    public static final int USAGE = 2;
    /** Kafka is unreachable, refuses us, or lacks the topics the command needs. */
    public static final int UNAVAILABLE = 3;
    /** The configuration file is unreadable or holds an invalid value. */
    public static final int CONFIG = 4;

    private ExitCodes() {
    }
}
