package dev.interlock.file.flock;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.AcquireSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Semaphores on {@code flock:} (docs/semaphores.md): the steps of a permit that
 * {@link FlockAttempt} takes in order, all with the name's gate held.
 *
 * <p><b>A permit of a semaphore of N</b> on the name whose lock file is {@code F} is two kernel
 * locks: flock(LOCK_EX) on one of N <em>slot files</em> {@code .gates/F+0} to
 * {@code .gates/F+(N-1)} (at most N holders, because there are N slots), and flock(LOCK_SH) on
 * {@code F} itself (so a plain exclusive lock, Interlock's or {@code flock(1)}'s, excludes permits
 * and is excluded by them). Both are released by close(2), so a dead holder's permit frees at once,
 * as its lock would. {@code +} never appears in a lock file's name, so slot files cannot be
 * anyone's gate.
 *
 * <p><b>The limit</b> is written into {@code F} by every permit grant ({@code limit N}, with one
 * record per slot: {@link LockFileContent}), under the gate, where every user reads it; plain
 * grants write their records without it. Whoever holds the name now was granted since the name
 * was last free, and the first grant after that rewrote {@code F} in its own mode: the content
 * therefore tells in which mode the name is held, once the kernel has told that it is held.
 *
 * <p><b>In turn:</b> every permit asker takes the gate first (flock(LOCK_EX|LOCK_NB) on
 * {@code .gates/F}); one that finds no free slot keeps the gate while it waits, so a newcomer
 * cannot take the slot that frees before it: the gate holder is served first, and the others wait
 * for the gate in the kernel, as waiting writers of {@code flock:} do. Those others mark their
 * places on the gate file, and a newcomer that finds a mark gives the gate back without taking a
 * slot ({@link FlockQueue}): no newcomer passes any waiter.
 */
final class FlockSemaphore {
    /** Records kept in the lock file: the first 64 KiB of it are read, and each record takes about 80 bytes. */
    static final int MAX_PERMIT_RECORDS = 512;

    private FlockSemaphore() {}

    /** The lock file's content and its length, as read under the gate. */
    record Read(LockFileContent content, int length) {}

    /** The name of slot {@code slot}'s file in {@code .gates}, NUL-terminated. */
    static byte[] slotBytes(String fileName, int slot) {
        return LibcFiles.cstring(slotName(fileName, slot));
    }

    static String slotName(String fileName, int slot) {
        return fileName + "+" + slot;
    }

    /**
     * With the gate held: takes flock(LOCK_SH) on the lock file {@code fd} and checks that the name
     * is free or held as a semaphore of the same limit. On a disagreement it throws
     * {@code LimitMismatchException}; the caller then closes {@code fd}, which drops what this took.
     */
    static Read admit(FlockBackend b, AcquireSpec spec, String fileName, int fd) {
        int limit = spec.limit();
        if (!lockNb(b, spec, fd, LibcFiles.LOCK_SH)) {
            // Permits hold the lock file shared: only a plain exclusive lock keeps a shared one out.
            throw b.failures.limitMismatch(spec.name(), 0, limit);
        }
        Read read = read(b, spec, fileName, fd);
        LockFileContent content = read.content();
        if (content.limit == limit && content.records.isEmpty()) {
            return read; // a semaphore of this limit (held now, or its content stale): the same either way
        }
        // The content is of another mode: in force only if others hold the file. An upgrade that
        // succeeds proves nobody does; one that fails has dropped our shared lock (flock(2) drops
        // the old lock before it tries the new one), which the refusal below does not need.
        if (!lockNb(b, spec, fd, LibcFiles.LOCK_EX)) {
            throw b.failures.limitMismatch(spec.name(), content.limit, limit);
        }
        if (!lockNb(b, spec, fd, LibcFiles.LOCK_SH)) {
            throw b.failures.limitMismatch(spec.name(), 0, limit); // a plain lock came in between
        }
        return read;
    }

    /**
     * Takes a free slot: returns its file's descriptor, locked, with the slot number in
     * {@code slotOut[0]}; or -1 if all {@code limit} slots are held. Slots never granted are tried
     * first, then the others from the least recently granted: the likeliest to be free.
     */
    static int takeSlot(FlockBackend b, AcquireSpec spec, String fileName, LockFileContent content, int[] slotOut) {
        int limit = spec.limit();
        List<LockFileContent.PermitRecord> byAge = new ArrayList<>();
        boolean[] granted = new boolean[limit];
        if (content.limit == limit) {
            for (LockFileContent.PermitRecord r : content.permits) {
                if (r.slot() >= 0 && r.slot() < limit && !granted[r.slot()]) {
                    granted[r.slot()] = true;
                    byAge.add(r);
                }
            }
            byAge.sort(OLDEST_FIRST);
        }
        for (int s = 0; s < limit; s++) {
            if (!granted[s]) {
                int fd = tryLockSlot(b, spec, fileName, s);
                if (fd >= 0) {
                    slotOut[0] = s;
                    return fd;
                }
            }
        }
        for (LockFileContent.PermitRecord r : byAge) {
            int fd = tryLockSlot(b, spec, fileName, r.slot());
            if (fd >= 0) {
                slotOut[0] = r.slot();
                return fd;
            }
        }
        return -1;
    }

    private static final Comparator<LockFileContent.PermitRecord> OLDEST_FIRST = new Comparator<>() {
        @Override
        public int compare(LockFileContent.PermitRecord a, LockFileContent.PermitRecord c) {
            return Long.compare(a.token(), c.token());
        }
    };

    private static int tryLockSlot(FlockBackend b, AcquireSpec spec, String fileName, int slot) {
        String slotName = slotName(fileName, slot);
        int fd = FlockFiles.open(b, spec.name(), slotName, LibcFiles.cstring(slotName), true);
        boolean locked = false;
        try {
            locked = lockNb(b, spec, fd, LibcFiles.LOCK_EX);
        } finally {
            if (!locked) {
                LibcFiles.close(fd);
            }
        }
        return locked ? fd : -1;
    }

    /**
     * Writes the grant of {@code slot} into the lock file (held shared, with the gate): the next
     * token of the name's one sequence, the limit, and the slot's record in place of its last one.
     * Returns the token.
     */
    static long grant(FlockBackend b, AcquireSpec spec, String fileName, int fd, Read read, int slot) {
        LockFileContent content = read.content();
        long token = Math.max(content.token + 1, b.clockToken());
        List<LockFileContent.PermitRecord> kept = new ArrayList<>();
        if (content.limit == spec.limit()) {
            for (LockFileContent.PermitRecord r : content.permits) {
                if (r.slot() != slot && r.slot() >= 0 && r.slot() < spec.limit()) {
                    kept.add(r);
                }
            }
        }
        while (kept.size() >= MAX_PERMIT_RECORDS) {
            kept.remove(0); // the oldest record: status then shows that holder without its details
        }
        kept.add(new LockFileContent.PermitRecord(slot, token, spec.owner().id(), b.clock.millis()));
        boolean hashed = NameMapping.isHashed(fileName);
        byte[] out = LockFileContent.renderPermits(
                token, hashed ? Optional.of(spec.name()) : Optional.empty(), spec.limit(), kept);
        FlockFiles.write(b, spec.name(), fd, out, read.length());
        return token;
    }

    /**
     * The limit of the permits held on the name now, or 0 if none is: for a plain lock that must
     * not be granted on a semaphore name. Probes each slot of the limit the content records
     * (flock(LOCK_EX|LOCK_NB) on a descriptor of its own, then close): with the gate held no permit
     * is granted meanwhile, so a slot that is busy is a permit held.
     */
    static int limitHeld(FlockBackend b, String fileName, LockFileContent content) {
        for (int s = 0; s < content.limit; s++) {
            int fd = LibcFiles.openat(b.gatesFd, slotBytes(fileName, s), FlockFiles.READ_ONLY_FLAGS, 0);
            if (fd < 0) {
                continue; // never made: never held
            }
            try {
                if (!NativeFiles.tryFlock(fd, LibcFiles.LOCK_EX)) {
                    return content.limit;
                }
            } catch (ErrnoException e) {
                throw b.failure(null, "flock(2) failed", e.errno(), e.errno() == Errno.ENOLCK);
            } finally {
                LibcFiles.close(fd);
            }
        }
        return 0;
    }

    /** Reads the lock file; refuses content that a semaphore cannot keep its limit in. */
    private static Read read(FlockBackend b, AcquireSpec spec, String fileName, int fd) {
        int[] len = new int[1];
        byte[] buf = FlockFiles.readLockFile(b, spec.name(), fd, len);
        LockFileContent content = LockFileContent.parse(buf, len[0]);
        if (content.kind == LockFileContent.Kind.FOREIGN) {
            throw b.failures.refused(
                    spec.name(),
                    "lock file " + b.dir.resolve(fileName)
                            + " holds content not written by Interlock, and a semaphore records its limit there;"
                            + " empty it (: > " + b.dir.resolve(fileName) + ") or use another name",
                    null);
        }
        FlockFiles.checkStoredName(b, spec.name(), fileName, content);
        return new Read(content, len[0]);
    }

    private static boolean lockNb(FlockBackend b, AcquireSpec spec, int fd, int op) {
        try {
            return NativeFiles.tryFlock(fd, op);
        } catch (ErrnoException e) {
            throw b.failure(spec.name(), "flock(2) failed", e.errno(), e.errno() == Errno.ENOLCK);
        }
    }
}
