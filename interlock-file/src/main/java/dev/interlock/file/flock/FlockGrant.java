package dev.interlock.file.flock;

import dev.interlock.LockLostException;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.LockNames;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;

/**
 * A granted {@code flock:} lock: the open file description that holds the kernel lock (for a
 * permit, also the one that holds its slot: {@link FlockSemaphore}), its token, and the identity
 * checked at every renewal.
 */
final class FlockGrant implements Grant {
    private final FlockBackend backend;
    private final AcquireSpec spec;
    private final long token;
    private final Instant acquiredAt;
    private final LibcFiles.Statx id;
    private final byte[] fileBytes;
    private int fd;
    /** A permit's slot file, held exclusively; -1 for a plain lock. */
    private int slotFd;
    /** The slot file's name in {@code .gates}, NUL-terminated; null for a plain lock. */
    private final byte[] slotBytes;

    FlockGrant(
            FlockBackend backend,
            AcquireSpec spec,
            int fd,
            long token,
            Instant acquiredAt,
            LibcFiles.Statx id,
            byte[] fileBytes) {
        this(backend, spec, fd, -1, null, token, acquiredAt, id, fileBytes);
    }

    FlockGrant(
            FlockBackend backend,
            AcquireSpec spec,
            int fd,
            int slotFd,
            byte[] slotBytes,
            long token,
            Instant acquiredAt,
            LibcFiles.Statx id,
            byte[] fileBytes) {
        this.backend = backend;
        this.spec = spec;
        this.fd = fd;
        this.slotFd = slotFd;
        this.slotBytes = slotBytes;
        this.token = token;
        this.acquiredAt = acquiredAt;
        this.id = id;
        this.fileBytes = fileBytes;
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    @Override
    public synchronized void renew(Duration lease) {
        if (fd < 0) {
            throw lost(LockNames.quote(spec.name()) + " was released");
        }
        // Two identities: the directory others reach by the space's path must still be the one
        // we hold (not renamed away, not replaced), and the name in it must still be the
        // inode we hold (looked up by the descriptor, never by path).
        LibcFiles.Statx now;
        LibcFiles.Statx dirNow;
        LibcFiles.Statx dirHeld;
        boolean slotLost;
        int err = 0;
        boolean dirGone = false;
        try {
            backend.enter();
        } catch (IllegalStateException e) {
            throw new LockLostException(
                    backend.description, spec.name(), backend.description + " - the lock space was closed", e);
        }
        try {
            dirHeld = LibcFiles.fstat(backend.dirFd);
            try {
                dirNow = NativeFiles.statx(LibcFiles.AT_FDCWD, backend.dirPath, 0);
            } catch (ErrnoException e) {
                dirNow = null;
                dirGone = e.errno() == Errno.ENOENT
                        || e.errno() == Errno.ENOTDIR; // EACCES and the like: cannot tell, not a loss
            }
            try {
                now = NativeFiles.statx(backend.dirFd, fileBytes, LibcFiles.AT_SYMLINK_NOFOLLOW);
            } catch (ErrnoException e) {
                now = null;
                err = e.errno();
            }
            slotLost = slotFd >= 0 && slotReplaced();
        } finally {
            backend.leave();
        }
        if (dirHeld != null && (dirGone || (dirNow != null && !dirHeld.sameFile(dirNow)))) {
            throw lost("the lock directory " + backend.dir + " was removed or replaced while "
                    + LockNames.quote(spec.name()) + " was held; another process may now lock a new file of that name");
        }
        if (now == null) {
            if (err == Errno.ENOENT) {
                throw lost("the lock file of " + LockNames.quote(spec.name())
                        + " was removed while held; another process may now lock a new file of that name");
            }
            throw backend.failure(spec.name(), "cannot check the lock file", err, true);
        }
        if (!now.sameFile(id)) {
            throw lost("the lock file of " + LockNames.quote(spec.name()) + " was replaced by another file while held");
        }
        if (slotLost) {
            throw lost("the slot file of this permit of " + LockNames.quote(spec.name())
                    + " was removed or replaced while held; another process may now take a permit beyond the limit");
        }
    }

    /** The loss of this grant, said as "description - what". */
    private LockLostException lost(String what) {
        return new LockLostException(backend.description, spec.name(), backend.description + " - " + what, null);
    }

    /** True if the name of this permit's slot file in {@code .gates} no longer leads to the inode we hold. */
    private boolean slotReplaced() {
        LibcFiles.Statx held = LibcFiles.fstat(slotFd);
        try {
            return held != null
                    && !held.sameFile(NativeFiles.statx(backend.gatesFd, slotBytes, LibcFiles.AT_SYMLINK_NOFOLLOW));
        } catch (ErrnoException e) {
            return e.errno() == Errno.ENOENT; // other errors (EACCES...) cannot tell: not a loss
        }
    }

    @Override
    public synchronized void release() {
        if (fd >= 0) {
            if (slotFd >= 0) {
                // The slot first: a waiter is woken by the close of the lock file, and must find the slot free then.
                LibcFiles.close(slotFd);
                slotFd = -1;
            }
            LibcFiles.close(fd);
            fd = -1;
            FlockBackend.liveNonces.remove(spec.owner().nonce());
            InotifyWatcher.process().flushIdle(); // the watches of our wait, now that the release is out
        }
    }

    @Override
    public synchronized OptionalInt inheritableDescriptor() {
        // A permit's slot is what bounds the holders to N: a child that outlives us keeps that.
        return fd < 0 ? OptionalInt.empty() : OptionalInt.of(slotFd >= 0 ? slotFd : fd);
    }
}
