package dev.interlock.file.internal;

import dev.interlock.Lease;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import dev.interlock.file.FencedWriteException;

/**
 * The commit of a {@link ReplaceTarget}: flush the temporary file, then, under the directory's
 * exclusive gate, check that the temporary name still holds it, compare the fencing token, check
 * the lease and rename it over the file (the contract is on {@link ReplaceTarget#commit}). One
 * per target, whose file its messages name.
 */
final class ReplaceCommit {
    private final ReplaceTarget target;

    ReplaceCommit(ReplaceTarget target) {
        this.target = target;
    }

    private void flush(ReplaceTarget.Temp t) throws AtomicFileException {
        try {
            NativeFiles.fsync(t.fd());
        } catch (ErrnoException e) {
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot flush the temporary file " + t.shown() + " to disk: " + e.getMessage() + "; "
                            + target.path() + " is unchanged");
        }
    }

    /** {@link ReplaceTarget#commit}. */
    boolean commit(ReplaceTarget.Temp t, long token, Lease lease) throws AtomicFileException {
        flush(t);
        String noGate = target.gate(LibcFiles.LOCK_EX);
        boolean gated = noGate == null;
        if (!gated && token >= 0 && lease == null) {
            // Without the gate, the lease keeps writers from committing at once (withdrawOlderWrites handles a late
            // one).
            throw new AtomicFileException(
                    Reason.FENCE_UNSUPPORTED,
                    "cannot fence writes to " + target.path() + ": flock(2) on its"
                            + " directory " + target.directory() + " failed (" + noGate
                            + "), and a fenced write without a lease"
                            + " needs it, so that the token check and the rename cannot race; write it under a lease (updateFenced,"
                            + " update --token), put the file on a local file system, or write it unfenced; "
                            + target.path()
                            + " is unchanged");
        }
        try {
            byte[] ctmp = LibcFiles.cstring(t.name());
            ReplaceTarget.Stat there = target.lstat(ctmp, t.shown());
            if (!t.stat().sameFile(there)) {
                if (token >= 0) {
                    refuseIfFencedSince(token); // withdrawn by a newer holder's commit
                }
                throw new AtomicFileException(
                        Reason.IO,
                        "the temporary file " + t.shown() + " in " + target.directory()
                                + " was removed or replaced while the new content was made (by someone else who can write that directory, or by an"
                                + " update of the same file under another lock name); " + target.path()
                                + " is unchanged");
            }
            byte[] current = target.fences.current();
            if (token >= 0) {
                if (current != null) {
                    long landed = target.fences.parse(current);
                    if (Long.compareUnsigned(landed, token) > 0) {
                        throw new FencedWriteException(target.path(), token, landed);
                    }
                }
                target.temps.withdrawOlderWrites(t, token, gated);
            } else if (current != null) {
                target.fences.setValue(t, current); // an unfenced write keeps the file's token
                flush(t);
            }
            if (lease != null && !lease.isValid()) {
                throw new AtomicFileException(
                        Reason.LEASE_NOT_VALID,
                        "the lease on " + lease.name() + " (token " + lease.token()
                                + ") is no longer valid: it ran out, was lost or was closed before the new content could replace "
                                + target.path() + "; it is unchanged");
            }
            try {
                NativeFiles.renameat(target.dirfd, ctmp, target.dirfd, target.cname);
            } catch (ErrnoException e) {
                if (e.errno() == Errno.ENOENT && token >= 0) {
                    refuseIfFencedSince(token); // a newer holder withdrew our temporary file: see withdrawOlderWrites
                }
                throw new AtomicFileException(
                        Reason.IO,
                        "cannot rename " + t.shown() + " over " + target.path() + ": " + e.getMessage()
                                + "; it is unchanged");
            }
        } finally {
            if (gated) {
                target.ungate();
            }
        }
        LibcFiles.fsync(
                target.dirfd); // some file systems cannot flush a directory (EINVAL); the rename is done either way
        ReplaceTarget.Stat now = target.lstatOrNull(target.cname);
        return t.stat().sameFile(now);
    }

    /** After a fenced rename found its temporary file gone: a FencedWriteException if a larger token has landed since. */
    private void refuseIfFencedSince(long token) throws AtomicFileException {
        byte[] current = target.fences.current();
        if (current != null) {
            long landed = target.fences.parse(current);
            if (Long.compareUnsigned(landed, token) > 0) {
                throw new FencedWriteException(target.path(), token, landed);
            }
        }
    }
}
