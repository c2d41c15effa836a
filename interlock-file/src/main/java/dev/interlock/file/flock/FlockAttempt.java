package dev.interlock.file.flock;

import dev.interlock.HolderInfo;
import dev.interlock.Mode;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.KernelWait;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.file.internal.Waker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Backoff;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One acquisition on {@code flock:} (see {@link FlockBackend} for the steps): tries with LOCK_NB,
 * keeps the gate while a writer (or a permit asker, {@link FlockSemaphore}) waits, waits on
 * inotify with a bounded poll.
 */
final class FlockAttempt implements Attempt {
    private final FlockBackend backend;
    private final AcquireSpec spec;
    private final String fileName;
    /** The file name, NUL-terminated: the lock file relative to the lock directory, the gate file relative to .gates. */
    private final byte[] fileBytes;

    private int fd = -1;
    private boolean readOnly;
    private int gfd = -1;
    private boolean gateHeld;
    /** A plain lock's attempt has checked, with the gate held, that no permit holds the name (once: the gate keeps new ones out). */
    private boolean permitsChecked;
    /** A permit's attempt holds the lock file shared and has checked the limit (kept while it waits with the gate). */
    private FlockSemaphore.Read admitted;
    /** A permit's attempt that has waited: it has its place in line, and gives way to no marked waiter ({@link FlockQueue}). */
    private boolean inLine;
    /** The gate descriptor carries this attempt's mark ({@link FlockQueue}), which goes when it is closed. */
    private boolean marked;
    /** A permit of 1 waiting with the gate sleeps in flock(2) on the one slot file, opened here (-1: none). */
    private int slotWaitFd = -1;
    /** The kernel gave that sleep the slot: the next try takes it as its own. */
    private boolean slotWaitHeld;

    private Waker waker;
    /** The bound of each sleep, so that what no wake-up reports (a lock file replaced) is found: the backends' one polling law. */
    private final Backoff backoff = Backoff.fixed(FlockBackend.POLL);

    private InotifyWatcher.Watch watchLock;
    private InotifyWatcher.Watch watchGate;
    /** The descriptors watched now (-1: none); a change of what this attempt waits on re-watches. */
    private int watchingLockFd = -1;

    private int watchingGateFd = -1;
    private long seen;
    /** False once a wait of this attempt could not block in the kernel (see {@link KernelWait}). */
    private boolean kernelWait = true;

    FlockAttempt(FlockBackend backend, AcquireSpec spec) {
        this.backend = backend;
        this.spec = spec;
        this.fileName = NameMapping.fileName(spec.name());
        this.fileBytes = LibcFiles.cstring(fileName);
    }

    @Override
    public Optional<Grant> tryAcquire() {
        backend.enter();
        try {
            backend.lockingDirFd();
            return tryAcquireLocked();
        } finally {
            backend.leave();
        }
    }

    private Optional<Grant> tryAcquireLocked() {
        if (waker != null) {
            seen = waker.seq();
        }
        if (spec.limit() > 0) {
            return tryPermit();
        }
        for (int round = 0; round < 3; round++) {
            if (fd < 0) {
                int r = FlockFiles.open(backend, spec.name(), fileName, fileBytes, false);
                readOnly = r < 0;
                fd = r < 0 ? ~r : r;
            }
            boolean locked;
            if (spec.mode() == Mode.EXCLUSIVE) {
                locked = !gateHeld && lockNb(fd, LibcFiles.LOCK_EX);
                if (!locked) {
                    if (!gateHeld && !takeGate()) {
                        return Optional.empty();
                    }
                    locked = lockNb(fd, LibcFiles.LOCK_EX);
                    if (!locked && !permitsChecked) {
                        permitsChecked = true;
                        refuseIfPermitsHeld(readContent());
                    }
                }
            } else {
                if (!gateHeld && !takeGate()) {
                    return Optional.empty();
                }
                locked = lockNb(fd, LibcFiles.LOCK_SH);
            }
            if (!locked) {
                return Optional.empty();
            }
            LibcFiles.Statx id = LibcFiles.fstat(fd);
            if (id != null && !id.isRegularFile()) {
                LibcFiles.close(fd);
                fd = -1;
                closeGate();
                throw backend.failures.refused(
                        spec.name(),
                        backend.dir.resolve(fileName) + " is not a regular file; remove it or use another name",
                        null);
            }
            if (id == null || id.nlink() == 0) {
                // Removed between our open and our flock: that inode is nobody's lock any more. Start over.
                LibcFiles.close(fd);
                fd = -1;
                continue;
            }
            return Optional.of(finish(id));
        }
        throw backend.failures.unreachable(
                spec.name(),
                "the lock file keeps being removed while we lock it; stop whatever deletes files in " + backend.dir,
                null);
    }

    /**
     * One try for a permit ({@link FlockSemaphore}): the gate first (a newcomer never passes the
     * waiter that holds it, nor, {@link FlockQueue}, one that marked its place), then the lock file
     * shared with the limit checked, then a free slot. Without a free slot the attempt keeps the
     * gate and the lock file while it waits.
     */
    private Optional<Grant> tryPermit() {
        for (int round = 0; round < 3; round++) {
            if (!gateHeld) {
                if (!takeGate()) {
                    if (spec.waits()) {
                        takePlaceInLine();
                    }
                    return Optional.empty();
                }
                if (!inLine && FlockQueue.othersWait(backend, spec.name(), gfd)) {
                    giveWay();
                    return Optional.empty();
                }
            }
            if (fd < 0) {
                int r = FlockFiles.open(backend, spec.name(), fileName, fileBytes, false);
                fd = r < 0 ? ~r : r;
                if (r < 0) {
                    closeAll();
                    throw backend.failures.refused(
                            spec.name(),
                            "lock file " + backend.dir.resolve(fileName)
                                    + " is not writable, and a semaphore records its limit there; give its users"
                                    + " write access to it",
                            null);
                }
            }
            int[] slot = new int[1];
            int slotFd;
            try {
                if (admitted == null) {
                    admitted = FlockSemaphore.admit(backend, spec, fileName, fd);
                }
                if (slotWaitHeld) {
                    slotFd = slotWaitFd; // slot 0, handed over by the kernel during the wait
                    slot[0] = 0;
                    slotWaitFd = -1;
                    slotWaitHeld = false;
                } else {
                    slotFd = FlockSemaphore.takeSlot(backend, spec, fileName, admitted.content(), slot);
                }
            } catch (RuntimeException e) {
                closeAll();
                throw e;
            }
            if (slotFd < 0) {
                inLine = spec.waits(); // first in line: it keeps the gate
                return Optional.empty();
            }
            LibcFiles.Statx id = LibcFiles.fstat(fd);
            if (id == null || id.nlink() == 0 || !id.isRegularFile()) {
                // Removed between our open and our flock: that inode is nobody's lock any more. Start over.
                LibcFiles.close(slotFd);
                closeAll();
                continue;
            }
            long token;
            try {
                token = FlockSemaphore.grant(backend, spec, fileName, fd, admitted, slot[0]);
            } catch (RuntimeException e) {
                LibcFiles.close(slotFd);
                closeAll();
                throw e;
            }
            closeGate();
            FlockGrant g = new FlockGrant(
                    backend,
                    spec,
                    fd,
                    slotFd,
                    FlockSemaphore.slotBytes(fileName, slot[0]),
                    token,
                    backend.clock.instant(),
                    id,
                    fileBytes);
            fd = -1;
            admitted = null;
            return Optional.of(g);
        }
        throw backend.failures.unreachable(
                spec.name(),
                "the lock file keeps being removed while we lock it; stop whatever deletes files in " + backend.dir,
                null);
    }

    /** A waiting attempt that could not take the gate: its mark keeps its place against newcomers ({@link FlockQueue}). */
    private void takePlaceInLine() {
        inLine = true;
        if (!marked) {
            marked = FlockQueue.mark(backend, spec.name(), gfd);
        }
    }

    /**
     * A newcomer that found waiters marked gives the gate back without looking at the slots. A
     * waiting one marks its place on a new descriptor of the gate file first, so that it is in line
     * before the gate is free. The gate is given back by close(2), not LOCK_UN: the close is what
     * wakes the waiters that watch the gate through inotify.
     */
    private void giveWay() {
        int held = gfd;
        gfd = -1;
        gateHeld = false;
        try {
            if (spec.waits()) {
                gfd = FlockFiles.open(backend, spec.name(), fileName, fileBytes, true);
                takePlaceInLine();
            }
        } finally {
            LibcFiles.close(held);
        }
    }

    /** Closes the lock file (dropping what it held) and the gate: the attempt starts over at its next try. */
    private void closeAll() {
        if (slotWaitFd >= 0) {
            LibcFiles.close(slotWaitFd);
            slotWaitFd = -1;
            slotWaitHeld = false;
        }
        if (fd >= 0) {
            LibcFiles.close(fd);
            fd = -1;
        }
        admitted = null;
        closeGate();
    }

    /** The lock file's content, read by this attempt's descriptor. */
    private LockFileContent readContent() {
        int[] len = new int[1];
        byte[] buf = FlockFiles.readLockFile(backend, spec.name(), fd, len);
        return LockFileContent.parse(buf, len[0]);
    }

    /**
     * A plain lock on a name held as a semaphore is a mistake, not a wait (docs/semaphores.md):
     * with the gate held, refuses if the limit the content records has a slot held.
     */
    private void refuseIfPermitsHeld(LockFileContent content) {
        if (content.limit == 0) {
            return;
        }
        int held = FlockSemaphore.limitHeld(backend, fileName, content);
        if (held > 0) {
            closeAll();
            throw backend.failures.limitMismatch(spec.name(), held, 0);
        }
    }

    private boolean takeGate() {
        if (gfd < 0) {
            gfd = FlockFiles.open(backend, spec.name(), fileName, fileBytes, true);
        }
        gateHeld = lockNb(gfd, LibcFiles.LOCK_EX);
        return gateHeld;
    }

    private boolean lockNb(int fd, int op) {
        try {
            return NativeFiles.tryFlock(fd, op);
        } catch (ErrnoException e) {
            throw backend.failure(spec.name(), "flock(2) failed", e.errno(), e.errno() == Errno.ENOLCK);
        }
    }

    private Grant finish(LibcFiles.Statx id) {
        long token;
        try {
            token = writeTokenAndRecord();
        } catch (RuntimeException e) {
            LibcFiles.close(fd);
            fd = -1;
            closeGate();
            throw e;
        }
        closeGate();
        FlockGrant g = new FlockGrant(backend, spec, fd, token, backend.clock.instant(), id, fileBytes);
        fd = -1;
        if (spec.mode() == Mode.SHARED) {
            FlockBackend.liveNonces.add(spec.owner().nonce());
        }
        return g;
    }

    private long writeTokenAndRecord() {
        int[] len = new int[1];
        byte[] buf = FlockFiles.readLockFile(backend, spec.name(), fd, len);
        boolean hashed = NameMapping.isHashed(fileName);
        long now = backend.clock.millis();
        if (spec.mode() == Mode.EXCLUSIVE && !hashed && !readOnly) {
            long stored = LockFileContent.quickToken(buf, len[0]);
            if (stored >= 0) {
                long token = Math.max(stored + 1, backend.clockToken());
                byte[] out = LockFileContent.renderOne(
                        token,
                        new LockFileContent.Record(
                                Mode.EXCLUSIVE, token, spec.owner().id(), now));
                writeContent(out, len[0]);
                return token;
            }
        }
        LockFileContent content = LockFileContent.parse(buf, len[0]);
        FlockFiles.checkStoredName(backend, spec.name(), fileName, content);
        if (spec.mode() == Mode.SHARED && content.limit > 0) {
            // A shared lock got in beside permits (they hold the lock file shared too): refuse it.
            int held = FlockSemaphore.limitHeld(backend, fileName, content);
            if (held > 0) {
                throw backend.failures.limitMismatch(spec.name(), held, 0);
            }
        }
        if (readOnly || content.kind == LockFileContent.Kind.FOREIGN) {
            if (content.kind == LockFileContent.Kind.FOREIGN) {
                backend.warnOnce(
                        "foreign:" + fileName,
                        "{} - lock file {} holds content not written by Interlock; leaving it untouched "
                                + "(fencing tokens for '{}' are clock-based, holder details are not recorded)",
                        backend.description,
                        backend.dir.resolve(fileName),
                        spec.name());
            }
            return backend.clockToken();
        }
        if (content.kind == LockFileContent.Kind.DAMAGED) {
            backend.warnOnce(
                    "damaged:" + fileName,
                    "{} - lock file {} was damaged (bad header); rewriting it",
                    backend.description,
                    backend.dir.resolve(fileName));
        }
        long token = Math.max(content.token + 1, backend.clockToken());
        LockFileContent.Record mine =
                new LockFileContent.Record(spec.mode(), token, spec.owner().id(), now);
        List<LockFileContent.Record> records;
        if (spec.mode() == Mode.EXCLUSIVE) {
            records = List.of(mine);
        } else {
            records = new ArrayList<>();
            for (LockFileContent.Record r : content.records) {
                if (r.mode() == Mode.SHARED && backend.plausiblyHeld(r)) {
                    records.add(r);
                }
            }
            while (records.size() >= FlockBackend.MAX_SHARED_RECORDS) {
                records.remove(0);
            }
            records.add(mine);
        }
        writeContent(
                LockFileContent.render(token, hashed ? Optional.of(spec.name()) : Optional.empty(), records), len[0]);
        return token;
    }

    private void writeContent(byte[] out, int oldLength) {
        FlockFiles.write(backend, spec.name(), fd, out, oldLength);
    }

    private void closeGate() {
        if (gfd >= 0) {
            LibcFiles.close(gfd);
            gfd = -1;
        }
        gateHeld = false;
        marked = false;
    }

    @Override
    public void await(long nanos) throws InterruptedException {
        if (waker == null) {
            waker = new Waker();
            backend.waiting.add(waker);
            seen = waker.seq();
        }
        // Watch only what can let this attempt in: holding the gate, the lock file's close (the
        // holder's release); without it, the gate's close (its holder got the lock or gave up).
        // Watching both woke every waiter at every release, though only the gate holder can go
        // on: with 8 processes on one lock, the herd cost more than the locking.
        boolean wantLock = gateHeld || gfd < 0;
        boolean wantGate = !gateHeld && gfd >= 0;
        long slice = Math.min(nanos, backoff.nextNanos());
        // A permit asker with the gate waits for any of the slots: every permit's release closes
        // the lock file it held shared, which inotify reports; the kernel would sleep on one file only.
        boolean waitsForSlot = spec.limit() > 0 && gateHeld;
        // A permit of 1 has one slot to wait for: the kernel can wait for it, as for a lock.
        boolean sleepsOnSlot = waitsForSlot && spec.limit() == 1;
        if (kernelWait && (!waitsForSlot || sleepsOnSlot) && KernelWait.usable()) {
            // Sleep in the kernel's lock queue, as flock(1) does: the gate holder on the lock file
            // (on the slot file for a permit of 1), the others on the gate. The release wakes the
            // sleeper inside the kernel.
            if (sleepsOnSlot && slotWaitFd < 0) {
                String slotName = FlockSemaphore.slotName(fileName, 0);
                slotWaitFd = FlockFiles.open(backend, spec.name(), slotName, LibcFiles.cstring(slotName), true);
            }
            int target = sleepsOnSlot ? slotWaitFd : wantLock ? fd : gfd;
            int op = wantLock && spec.mode() == Mode.SHARED ? LibcFiles.LOCK_SH : LibcFiles.LOCK_EX;
            if (watchLock != null || watchGate != null) {
                unwatch();
            }
            int r = KernelWait.flock(target, op, slice, waker, seen);
            if (r == KernelWait.LOCKED) {
                // The next try finds the lock, the slot or the gate already ours.
                if (sleepsOnSlot) {
                    slotWaitHeld = true;
                } else {
                    gateHeld |= wantGate;
                }
                return;
            }
            if (r == KernelWait.ENDED) {
                return;
            }
            if (r != KernelWait.UNAVAILABLE) {
                throw backend.failure(spec.name(), "flock(2) failed", r, r == Errno.ENOLCK);
            }
            kernelWait = false; // no timer for this thread: wait through inotify
        }
        if (watchingLockFd != (wantLock ? fd : -1)
                || watchingGateFd != (wantGate ? gfd : -1)
                || watchLock != null && watchLock.isDead()
                || watchGate != null && watchGate.isDead()) {
            unwatch();
            watchingLockFd = wantLock ? fd : -1;
            watchingGateFd = wantGate ? gfd : -1;
            watch();
            return; // watches are active now: let the caller try again before sleeping
        }
        waker.awaitChange(seen, slice);
    }

    /** How many times inotify woke this attempt; for tests. */
    long wakeups() {
        return waker == null ? 0 : waker.seq();
    }

    /** Watches the inodes this attempt waits on, through their descriptors: no name is looked up again. */
    private void watch() {
        watchLock = watchingLockFd >= 0 ? watchFile(watchingLockFd) : null;
        watchGate = watchingGateFd >= 0 ? watchFile(watchingGateFd) : null;
    }

    private InotifyWatcher.Watch watchFile(int descriptor) {
        InotifyWatcher.Watch w = InotifyWatcher.process().watch(descriptor, FlockBackend.WATCH_MASK, waker);
        if (w != null) {
            backend.watches.incrementAndGet();
        }
        return w;
    }

    private void unwatch() {
        if (watchLock != null) {
            watchLock.close();
            backend.watches.decrementAndGet();
            watchLock = null;
        }
        if (watchGate != null) {
            watchGate.close();
            backend.watches.decrementAndGet();
            watchGate = null;
        }
        watchingLockFd = -1;
        watchingGateFd = -1;
    }

    @Override
    public List<HolderInfo> blockers() {
        try {
            return backend.inspect(spec.name()).holders();
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    @Override
    public void close() {
        if (waker != null) {
            unwatch();
            backend.waiting.remove(waker);
        }
        closeAll();
    }
}
