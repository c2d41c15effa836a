package dev.interlock.file.dir;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Mode;
import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Permit;
import dev.interlock.file.dir.DirEntries.Reader;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.Log;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Status, list and break of a {@code dir:} space: each lock directory listed and read as it is
 * now (nothing is created), and a holder broken by renaming its exact gate or removing its
 * heartbeat, as a reclaim does (docs/dir-protocol.md).
 */
final class DirStatus {
    private static final Log log = Log.of(DirStatus.class);
    private final DirLockBackend backend;

    DirStatus(DirLockBackend backend) {
        this.backend = backend;
    }

    LockInfo inspect(String name) {
        return inspect(backend.root(false), name);
    }

    private LockInfo inspect(DirLockBackend.Root r, String name) {
        Optional<DirLockDir> d = backend.openLockDir(r, name, false);
        if (d.isEmpty()) {
            return new LockInfo(name, List.of(), 0);
        }
        try (DirLockDir dir = d.get()) {
            DirLockDir.Snapshot s = dir.list();
            return LockInfo.builder(name)
                    .holders(holders(s))
                    .waiters(s.waiters.size())
                    .queued(s.waiters.stream()
                            .sorted()
                            .map(DirEntries.Waiter::info)
                            .toList())
                    .limit(s.permits.stream().mapToInt(Permit::limit).max().orElse(0))
                    .build();
        }
    }

    static List<HolderInfo> holders(DirLockDir.Snapshot s) {
        List<HolderInfo> out = new ArrayList<>();
        for (Gate g : s.gates) {
            if (g.writer()) {
                out.add(g.holder().info(Mode.EXCLUSIVE, g.token()));
            }
        }
        s.readers.stream()
                .sorted(Comparator.comparingLong(Reader::token))
                .forEach(r -> out.add(r.holder().info(Mode.SHARED, r.token())));
        s.permits.stream().sorted(Comparator.comparingLong(Permit::token)).forEach(p -> out.add(permitHolder(p)));
        return out;
    }

    /**
     * A permit holder: as a writer, plus the latest its permit can last as seen from here (now plus
     * its lease: observers reclaim it a whole unrenewed lease after they first see its heartbeat).
     */
    private static HolderInfo permitHolder(Permit p) {
        HolderInfo h = p.holder().info(Mode.EXCLUSIVE, p.token());
        return new HolderInfo(
                h.mode(),
                h.ownerId(),
                h.host(),
                h.pid(),
                h.since(),
                Optional.of(Instant.now().plus(h.lease().orElseThrow())),
                h.token(),
                h.lease(),
                h.bootId());
    }

    List<LockInfo> list() {
        DirLockBackend.Root r = backend.root(false);
        int rootFd = r.fd;
        List<LockInfo> out = new ArrayList<>();
        List<NativeFiles.Entry> entries;
        try {
            entries = NativeFiles.list(rootFd);
        } catch (ErrnoException e) {
            throw backend.failure(null, "listing the lock directory failed", e);
        }
        for (NativeFiles.Entry e : entries) {
            String n = e.name();
            if (n.startsWith(".")) {
                continue; // marker, temporary directories
            }
            Optional<String> lockName = DirNames.decode(n);
            if (lockName.isEmpty() && DirNames.isHashed(n)) {
                try {
                    int fd = NativeFiles.openat(
                            rootFd,
                            n,
                            LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC,
                            0);
                    try {
                        lockName = backend.parseNameRecord(
                                NativeFiles.readFile(fd, DirLockBackend.NAME_RECORD, 16 * 1024));
                    } finally {
                        NativeFiles.close(fd);
                    }
                } catch (ErrnoException ex) {
                    lockName = Optional.empty();
                }
            }
            if (lockName.isEmpty() || !DirNames.encode(lockName.get()).equals(n)) {
                backend.reportForeign(null, n, List.of(n));
                continue;
            }
            try {
                out.add(inspect(r, lockName.get()));
            } catch (LockBackendException ex) {
                log.warn("{} - cannot inspect {}: {}", backend.description, n, ex.getMessage());
            }
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }

    boolean breakLock(String name, String ownerId) {
        Optional<DirLockDir> d = backend.openLockDir(name, false);
        if (d.isEmpty()) {
            return false;
        }
        try (DirLockDir dir = d.get()) {
            DirLockDir.Snapshot s = dir.list();
            for (Gate g : s.gates) {
                if (g.writer() && g.holder().ownerId().equals(ownerId)) {
                    boolean done = dir.cas(g.name(), Gate.free(g.token(), g.token(), DirLockBackend.nonce()));
                    if (done) {
                        log.warn(
                                "{} - broke '{}' held by {} (token {})", backend.description, name, ownerId, g.token());
                    }
                    return done;
                }
            }
            for (Reader r : s.readers) {
                if (r.holder().ownerId().equals(ownerId)) {
                    return breakEntry(dir, s, r.name(), r.token(), "shared by " + ownerId);
                }
            }
            for (Permit p : s.permits) {
                if (p.holder().ownerId().equals(ownerId)) {
                    return breakEntry(dir, s, p.name(), p.token(), "a permit of " + p.limit() + " held by " + ownerId);
                }
            }
            return false;
        }
    }

    /** Breaks a reader or permit as a reclaim does: its exact heartbeat first, then its entry. */
    private boolean breakEntry(DirLockDir dir, DirLockDir.Snapshot s, String entry, long token, String what) {
        Beat b = s.beats.get(token);
        boolean done = b == null || dir.remove(b.name());
        if (done) {
            dir.remove(entry);
            log.warn("{} - broke '{}' {} (token {})", backend.description, dir.name, what, token);
        }
        return done;
    }
}
