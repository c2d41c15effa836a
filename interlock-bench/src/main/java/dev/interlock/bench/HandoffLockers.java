package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.LibcEvents;
import dev.interlock.file.internal.LibcFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The locks {@link Handoff} times, one class per kind: each takes and releases the lock "handoff"
 * in its own way. Kept apart from the harness so that the harness reads as the measurement and
 * each kind as the lock it stands for.
 */
final class HandoffLockers {
    private HandoffLockers() {}

    interface Locker {
        void acquire() throws Exception;

        void release();

        void close();
    }

    /** A lock system of {@link JdbcSystems} or {@link RedisSystems}, on the lock "handoff". */
    static final class SystemLocker implements Locker {
        final LockSystem system;
        final LockSystem.Locker locker;

        SystemLocker(LockSystem system) throws Exception {
            this.system = system;
            this.locker = system.newLocker();
        }

        @Override
        public void acquire() throws Exception {
            locker.acquire("handoff");
        }

        @Override
        public void release() {
            try {
                locker.release();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            try {
                locker.close();
            } catch (Exception e) {
                // exiting anyway
            }
            system.close();
        }
    }

    static final class RawLocker implements Locker {
        final byte[] path;
        int fd = -1;

        RawLocker(Path dir) {
            path = LibcFiles.path(dir.resolve("raw"));
        }

        @Override
        public void acquire() {
            fd = LibcFiles.openat(
                    LibcFiles.AT_FDCWD, path, LibcFiles.O_RDWR | LibcFiles.O_CREAT | LibcFiles.O_CLOEXEC, 0666);
            if (LibcFiles.flock(fd, LibcFiles.LOCK_EX) != 0) {
                throw new IllegalStateException("flock failed");
            }
        }

        @Override
        public void release() {
            LibcFiles.close(fd);
        }

        @Override
        public void close() {}
    }

    /**
     * The floor of any fenced flock(2) lock: the raw blocking lock, then the least a holder must do
     * to issue a fencing token that only grows (read the last one from the lock file, write the
     * next one back): one pread(2) and one pwrite(2) of a 20-digit counter, no holder record, no
     * lease. What Interlock's {@code flock:} adds on top of it is its own cost; what this adds on top
     * of {@code raw} is the token's.
     */
    static final class RawTokenLocker implements Locker {
        final RawLocker raw;
        final byte[] buf = new byte[20];
        long token;

        RawTokenLocker(Path dir) {
            raw = new RawLocker(dir);
        }

        @Override
        public void acquire() {
            raw.acquire();
            token = issue(raw.fd, buf);
        }

        /** Reads the last token from the open file {@code fd} and writes the next one, which it returns. */
        static long issue(int fd, byte[] buf) {
            long n = LibcFiles.pread(fd, buf, buf.length, 0);
            long last = 0;
            for (int i = 0; i < n; i++) {
                last = last * 10 + (buf[i] - '0');
            }
            long token = last + 1;
            long v = token;
            for (int i = buf.length - 1; i >= 0; i--, v /= 10) {
                buf[i] = (byte) ('0' + v % 10);
            }
            if (LibcFiles.pwrite(fd, buf, buf.length, 0) != buf.length) {
                throw new IllegalStateException("pwrite failed");
            }
            return token;
        }

        @Override
        public void release() {
            raw.release();
        }

        @Override
        public void close() {}
    }

    /**
     * A fenced lock without a system call for its token: the raw lock, and the counter in a
     * shared mapping of the lock file's first bytes, kept for the life of the process. What a
     * token costs when it is two memory accesses.
     */
    static final class RawMappedTokenLocker implements Locker {
        final RawLocker raw;
        final MappedByteBuffer page;
        long token;

        RawMappedTokenLocker(Path dir) throws IOException {
            raw = new RawLocker(dir);
            try (FileChannel ch = FileChannel.open(
                    dir.resolve("raw-mapped"),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                page = ch.map(FileChannel.MapMode.READ_WRITE, 0, 8);
            }
        }

        @Override
        public void acquire() {
            raw.acquire();
            token = page.getLong(0) + 1;
            page.putLong(0, token);
        }

        @Override
        public void release() {
            raw.release();
        }

        @Override
        public void close() {}
    }

    /**
     * The floor of a fenced directory lock on one host, against which {@code dir:} is measured: the
     * lock is a directory made with mkdir(2) (atomic, on NFS too) and removed to release; a waiter
     * sleeps in a blocking read of an inotify descriptor watching the lock directory for removals,
     * and tries again after each; the holder then reads and writes a 20-digit token in a file kept
     * open. No holder record, no queue, no stale-lock recovery, no gate: what {@code dir:} adds
     * on top of it is its own cost.
     */
    static final class RawDirLocker implements Locker {
        static final byte[] LOCK = LibcFiles.cstring("raw-dir.lock");
        final int dirFd;
        final int inotify;
        final int tokenFd;
        final byte[] events = new byte[4096];
        final byte[] buf = new byte[20];
        long token;

        RawDirLocker(Path dir) {
            dirFd = LibcFiles.openat(
                    LibcFiles.AT_FDCWD,
                    LibcFiles.path(dir),
                    LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC,
                    0);
            inotify = LibcEvents.inotify_init1(LibcEvents.IN_CLOEXEC);
            if (dirFd < 0
                    || inotify < 0
                    || LibcEvents.inotify_add_watch(inotify, LibcFiles.path(dir), LibcEvents.IN_DELETE) < 0) {
                throw new IllegalStateException("cannot watch " + dir);
            }
            tokenFd = LibcFiles.openat(
                    dirFd,
                    LibcFiles.cstring("raw-dir.token"),
                    LibcFiles.O_RDWR | LibcFiles.O_CREAT | LibcFiles.O_CLOEXEC,
                    0666);
        }

        @Override
        public void acquire() {
            while (LibcFiles.mkdirat(dirFd, LOCK, 0700) != 0) {
                if (LibcFiles.read(inotify, events, events.length) < 0) { // asleep until something is removed
                    throw new IllegalStateException("inotify read failed");
                }
            }
            token = RawTokenLocker.issue(tokenFd, buf);
        }

        @Override
        public void release() {
            LibcFiles.unlinkat(dirFd, LOCK, LibcFiles.AT_REMOVEDIR);
        }

        @Override
        public void close() {}
    }

    static final class InterlockLocker implements Locker {
        final LockSpace locks;
        /** 0: a plain lock; N: one permit of a semaphore of N. */
        final int limit;

        Lease lease;

        InterlockLocker(String uri) {
            this(uri, 0);
        }

        /** Each acquire takes one permit of a semaphore of {@code limit} (0: the lock). */
        InterlockLocker(String uri, int limit) {
            locks = Interlock.open(uri);
            this.limit = limit;
        }

        @Override
        public void acquire() throws InterruptedException {
            lease = limit > 0 ? locks.lock("handoff").limit(limit).acquire() : locks.acquire("handoff");
        }

        @Override
        public void release() {
            lease.close();
        }

        @Override
        public void close() {
            locks.close();
        }
    }

    /** The classic dotlock: hard-link a unique temp file to NAME.lock; if that fails, sleep 100 ms and retry. */
    static final class HardLinkLocker implements Locker {
        final Path lock;
        final Path tmp;

        HardLinkLocker(Path dir) {
            lock = dir.resolve("handoff.lock");
            tmp = dir.resolve("handoff.lock.pid." + ProcessHandle.current().pid());
        }

        @Override
        public void acquire() throws Exception {
            while (true) {
                Files.writeString(tmp, "pid " + ProcessHandle.current().pid());
                try {
                    Files.createLink(lock, tmp);
                    Files.delete(tmp);
                    return;
                } catch (FileAlreadyExistsException e) {
                    Files.delete(tmp);
                    Thread.sleep(100);
                }
            }
        }

        @Override
        public void release() {
            try {
                Files.delete(lock);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {}
    }
}
