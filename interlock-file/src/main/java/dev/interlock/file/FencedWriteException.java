package dev.interlock.file;

/**
 * A fenced write refused because a write carrying a larger fencing token already landed on the
 * file: the writer's lock was lost (its lease ran out while it was paused, for example) and
 * someone else has held it since. The file keeps the newer content. See {@code docs/fencing.md}.
 */
public final class FencedWriteException extends AtomicFileException {
    private static final long serialVersionUID = 1L;
    private final long attemptedToken;
    private final long currentToken;

    public FencedWriteException(String file, long attemptedToken, long currentToken) {
        super(
                Reason.FENCED,
                "refused to write " + file + " with fencing token " + attemptedToken + ": a write with token "
                        + currentToken
                        + " already landed on it, so the lock this write was made under has been lost and taken"
                        + " by someone else since; " + file + " is unchanged");
        this.attemptedToken = attemptedToken;
        this.currentToken = currentToken;
    }

    /** The token of the refused write. */
    public long attemptedToken() {
        return attemptedToken;
    }

    /** The larger token the file already carries. */
    public long currentToken() {
        return currentToken;
    }
}
