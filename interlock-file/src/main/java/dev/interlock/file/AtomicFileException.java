package dev.interlock.file;

import java.io.IOException;

/**
 * An atomic replacement of a file ({@link AtomicFile}) that did not happen. Whatever the reason,
 * the file is left as it was: its old content, owner and mode (the message says so), and the
 * temporary file is removed. {@link #reason()} tells a program what kind of failure it was
 * without parsing the message; the message tells a person what to fix.
 */
public class AtomicFileException extends IOException {
    private static final long serialVersionUID = 1L;

    /** What kind of failure, for a program to act on (the command line maps each to an exit status). */
    public enum Reason {
        /**
         * The path cannot be replaced: it is a directory, a FIFO, a device, a socket or a symbolic
         * link (never followed), its directory does not exist, or its name is too long. Fix the path.
         */
        BAD_PATH,
        /** The file could not be read, or the temporary file could not be created, written, flushed or renamed (errno in the message). */
        IO,
        /** The lease the write was made under was no longer valid just before the rename. */
        LEASE_NOT_VALID,
        /** A fenced write was refused: a write with a larger token already landed ({@link FencedWriteException}). */
        FENCED,
        /** A fenced write was asked for, but the file system does not keep user extended attributes, where the token is kept. */
        FENCE_UNSUPPORTED,
        /** The system refused something unrelated to this file (descriptors, /proc not mounted). */
        SYSTEM
    }

    private final Reason reason;

    public AtomicFileException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    /** What kind of failure it was. */
    public Reason reason() {
        return reason;
    }
}
