package dev.interlock.file.internal;

/**
 * Internal API of Interlock (not for applications; may change in any release): a failed native
 * call, for code whose control flow is easier with exceptions ({@link Errno#check}). Its message is
 * {@link Errno#describe} of the error number and nothing else, so it can be put in a message as is.
 */
public final class ErrnoException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int errno;

    public ErrnoException(int errno) {
        super(Errno.describe(errno), null, false, false);
        this.errno = errno;
    }

    /** The error number. */
    public int errno() {
        return errno;
    }
}
