package dev.interlock.file.flock;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.Log;

/**
 * The places in line of the permit askers that wait on {@code flock:} (docs/semaphores.md, "In
 * turn"), so that no newcomer passes any of them, not only the one that holds the gate.
 *
 * <p><b>The mark.</b> A waiting permit asker that finds the gate held marks its place on the
 * descriptor of the gate file it then waits with: an open file description lock
 * ({@code fcntl(F_OFD_SETLK)}, a read lock on the whole file). A newcomer, a permit asker that
 * has not waited yet, takes the gate and asks the kernel whether anyone holds a mark
 * ({@code fcntl(F_OFD_GETLK)} for a write lock: one system call, on the descriptor it already
 * has). If someone does, the freed slot is theirs: the newcomer gives the gate back without
 * looking at the slots; a single try returns empty, a waiting one marks its own place and joins
 * them. Marked waiters do not look: among them the kernel picks who takes the gate next, as it
 * picks among waiting writers. The waiter that holds the gate goes first, as before.
 *
 * <p><b>Why a lock.</b> The mark lives exactly as long as the waiter's descriptor: a waiter that
 * times out, is interrupted or gives up closes it, and the kernel closes those of a killed
 * process (SIGKILL included), so no stale mark can keep newcomers out of a name. A stopped
 * process keeps its place, as a stopped holder keeps its permit. Marks cost nothing when nobody
 * waits: the check is the only addition to an uncontended permit.
 *
 * <p><b>Why it leaves flock(2) alone.</b> On a local file system the kernel keeps the two kinds of
 * lock apart: the gate's flock(2), plain locks and {@code flock(1)} never see a mark, and status
 * reads only the FLOCK lines of {@code /proc/locks}. NFS and SMB emulate flock(2) with byte-range
 * locks, where a mark would conflict with the gate itself: on a network file system
 * ({@code ?network=allow}) no marks are made and the kernel picks among all who wait for the
 * gate, as it did before marks; likewise on a kernel without open file description locks
 * (before 3.15) and on 32-bit systems (another {@code struct flock}).
 */
final class FlockQueue {
    private static final Log log = Log.of(FlockQueue.class);

    /** False once the kernel refused these locks (EINVAL), or where their structure is not known. */
    private static volatile boolean supported = LibcFiles.WHOLE_FILE_LOCKS;

    private FlockQueue() {}

    private static boolean inUse(FlockBackend backend) {
        return supported && !backend.onNetworkFileSystem;
    }

    /**
     * Marks the place in line of the attempt that waits with {@code gateFd}: true if it is marked
     * now, false where marks are not made. The mark goes when the descriptor is closed.
     */
    static boolean mark(FlockBackend backend, String name, int gateFd) {
        if (!inUse(backend)) {
            return false;
        }
        try {
            // Nobody takes a write lock on a gate file, so nothing can refuse this read lock.
            return NativeFiles.tryLockWholeFile(gateFd, LibcFiles.F_RDLCK);
        } catch (ErrnoException e) {
            refuseUnlessUnsupported(backend, name, e);
            return false;
        }
    }

    /**
     * With the gate held on {@code gateFd} by a newcomer: true if a waiter has marked its place on
     * the gate file (this descriptor's own mark, if any, does not count).
     */
    static boolean othersWait(FlockBackend backend, String name, int gateFd) {
        if (!inUse(backend)) {
            return false;
        }
        try {
            return NativeFiles.wholeFileLockConflicts(gateFd, LibcFiles.F_WRLCK);
        } catch (ErrnoException e) {
            refuseUnlessUnsupported(backend, name, e);
            return false;
        }
    }

    /** EINVAL (a kernel before 3.15) turns marks off for the process; any other error throws. */
    private static void refuseUnlessUnsupported(FlockBackend backend, String name, ErrnoException e) {
        if (e.errno() != Errno.EINVAL) {
            throw backend.failure(name, "fcntl(2) on the gate file failed", e.errno(), e.errno() == Errno.ENOLCK);
        }
        if (supported) {
            supported = false;
            log.debug("no open file description locks here ({}): permit waiters are not marked", e.getMessage());
        }
    }
}
