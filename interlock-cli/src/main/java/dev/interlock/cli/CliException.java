package dev.interlock.cli;

/** A failure meant for the user: the message says what is wrong and what to do; no stack trace unless -v. */
final class CliException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    CliException(int exitCode, String message) {
        this(exitCode, message, null);
    }

    CliException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode() {
        return exitCode;
    }
}
