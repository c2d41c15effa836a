package dev.interlock.cli;

/**
 * The exit statuses of {@code interlock}. They follow flock(1) and sysexits.h, and are part of the
 * interface: scripts depend on them.
 */
final class ExitCodes {
    private ExitCodes() {}

    static final int OK = 0;
    /** Default status of {@code run} when the lock is busy ({@code -n}) or the wait ran out ({@code -w}); {@code -E} changes it. */
    static final int CONFLICT = 1;
    /** EX_USAGE: bad option, bad duration, bad lock name, bad URI, {@code run} without {@code --} or command. */
    static final int USAGE = 64;
    /** EX_UNAVAILABLE: the backend is unusable or unreachable (directory missing, not writable, unsafe). */
    static final int UNAVAILABLE = 69;
    /** EX_SOFTWARE: a bug in interlock. */
    static final int SOFTWARE = 70;
    /** EX_OSERR: the operating system refused (spawn failed for lack of memory, processes...). */
    static final int OSERR = 71;
    /** EX_TEMPFAIL: the lock was lost while the command ran; the command was stopped. */
    static final int LOCK_LOST = 75;
    /**
     * EX_NOPERM: {@code update --token T} was refused because a write with a larger fencing token
     * already landed on the file: the lock T came with has been lost and taken since.
     */
    static final int FENCED = 77;
    /** Like a shell: the command was found but could not be executed. */
    static final int CANNOT_EXECUTE = 126;
    /** Like a shell: the command was not found. */
    static final int NOT_FOUND = 127;
    /** A command killed by signal N makes {@code run} exit with 128+N, like a shell. */
    static final int SIGNAL_BASE = 128;

    /** Decodes a wait(2) status the way a shell reports it: the exit status, or 128+signal. */
    static int shellStatus(int status) {
        int sig = status & 0x7f;
        if (sig == 0) {
            return (status >> 8) & 0xff;
        }
        return SIGNAL_BASE + sig;
    }

    /** True if a wait(2) status (WUNTRACED) says the child was stopped. */
    static boolean stopped(int status) {
        return (status & 0xff) == 0x7f;
    }
}
