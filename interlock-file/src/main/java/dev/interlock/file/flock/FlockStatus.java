package dev.interlock.file.flock;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NfsMountDevices;
import dev.interlock.file.internal.ProcLocks;
import dev.interlock.file.internal.ProcLocksFile;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Status and list of a {@code flock:} space: who holds a lock is what the kernel says
 * ({@code /proc/locks}), matched with the records in the lock file for owner, time and token.
 * Reading never creates anything.
 */
final class FlockStatus {
    private final FlockBackend backend;

    FlockStatus(FlockBackend backend) {
        this.backend = backend;
    }

    /**
     * What {@code LockBackend.inspect} answers: who holds {@code name} now, from the kernel's locks.
     *
     * @throws LockBackendException "no lock space at DIR (nothing was created)" if the lock
     *     directory does not exist: reading never creates it
     */
    LockInfo inspect(String name) {
        String fileName = NameMapping.fileName(name);
        backend.enter();
        try {
            return inspectFile(backend.readingDirFd(), name, fileName, LibcFiles.cstring(fileName));
        } finally {
            backend.leave();
        }
    }

    private LockInfo inspectFile(int d, String name, String fileName, byte[] fileBytes) {
        LibcFiles.Statx id = LibcFiles.lstatAt(d, fileBytes);
        if (id == null || !id.isRegularFile()) {
            return new LockInfo(name, List.of(), 0);
        }
        // On a network file system (allowed), a holder may have locked through another mount of the share.
        long[] devices = backend.networkAllowed
                ? NfsMountDevices.sameShare(id.devMajor(), id.devMinor())
                : new long[] {NfsMountDevices.device(id.devMajor(), id.devMinor())};
        String procLocks = ProcLocksFile.read();
        List<ProcLocks.Entry> kernel = ProcLocks.flocksOn(devices, id.ino(), procLocks);
        LockFileContent content = readContent(d, fileBytes);
        if (content != null && content.limit > 0 && heldSharedOnly(kernel)) {
            return inspectPermits(d, name, fileName, content, devices, procLocks);
        }
        List<LockFileContent.Record> unused = new ArrayList<>(content == null ? List.of() : content.records);
        unused.sort(NEWEST_FIRST);
        List<HolderInfo> holders = new ArrayList<>();
        int waiters = 0;
        for (ProcLocks.Entry e : kernel) {
            if (e.waiting()) {
                waiters++;
                continue;
            }
            LockFileContent.Record match = null;
            for (LockFileContent.Record r : unused) {
                if (r.mode() == e.mode() && pidOf(r.ownerId()) == e.pid()) {
                    match = r;
                    break;
                }
            }
            if (match != null) {
                unused.remove(match);
                Owner o = Owner.parse(match.ownerId());
                holders.add(new HolderInfo(
                        e.mode(),
                        Optional.of(o.id()),
                        Optional.of(o.host()),
                        e.pid(),
                        Optional.of(Instant.ofEpochMilli(match.sinceMillis())),
                        Optional.empty(),
                        OptionalLong.of(match.token())));
            } else {
                holders.add(new HolderInfo(
                        e.mode(),
                        Optional.empty(),
                        Optional.of(ProcessIdentity.current().host()),
                        e.pid(),
                        Optional.empty(),
                        Optional.empty(),
                        OptionalLong.empty()));
            }
        }
        holders.sort(EXCLUSIVE_FIRST);
        return new LockInfo(name, holders, waiters);
    }

    /** True if the lock file is held, and only shared: by permits when the content records a limit. */
    private static boolean heldSharedOnly(List<ProcLocks.Entry> kernel) {
        boolean shared = false;
        for (ProcLocks.Entry e : kernel) {
            if (!e.waiting()) {
                if (e.mode() != Mode.SHARED) {
                    return false;
                }
                shared = true;
            }
        }
        return shared;
    }

    /**
     * A name held as a semaphore ({@link FlockSemaphore}): one holder per slot file the kernel
     * shows locked, with the details of the slot's record; the waiters are those queued for the
     * gate, plus the one that holds it while it waits for a slot.
     */
    private LockInfo inspectPermits(
            int d, String name, String fileName, LockFileContent content, long[] devices, String procLocks) {
        int g = LibcFiles.openat(d, FlockBackend.GATES_BYTES, FlockBackend.DIR_FLAGS | LibcFiles.O_NOFOLLOW, 0);
        if (g < 0) {
            return LockInfo.builder(name).limit(content.limit).build();
        }
        try {
            Map<Long, List<ProcLocks.Entry>> byInode = ProcLocks.flocksByInode(devices, procLocks);
            List<HolderInfo> holders = new ArrayList<>();
            for (int s = 0; s < content.limit; s++) {
                LibcFiles.Statx slot = LibcFiles.lstatAt(g, FlockSemaphore.slotBytes(fileName, s));
                if (slot == null || !slot.isRegularFile()) {
                    continue;
                }
                for (ProcLocks.Entry e : byInode.getOrDefault(slot.ino(), List.of())) {
                    if (!e.waiting()) {
                        holders.add(permitHolder(content, s, e.pid()));
                    }
                }
            }
            int waiters = 0;
            LibcFiles.Statx gate = LibcFiles.lstatAt(g, LibcFiles.cstring(fileName));
            if (gate != null) {
                // Queued for the gate, or holding it while waiting for a slot (or, for an instant, while trying).
                waiters = byInode.getOrDefault(gate.ino(), List.of()).size();
            }
            return LockInfo.builder(name)
                    .holders(holders)
                    .waiters(waiters)
                    .limit(content.limit)
                    .build();
        } finally {
            LibcFiles.close(g);
        }
    }

    /** The holder of slot {@code slot}, process {@code pid}: with owner, since and token if its record is the slot's. */
    private static HolderInfo permitHolder(LockFileContent content, int slot, long pid) {
        HolderInfo.Builder h = HolderInfo.builder(Mode.EXCLUSIVE)
                .pid(pid)
                .host(ProcessIdentity.current().host())
                .validUntil(Instant.MAX); // a kernel lock has no lease: it is held until released or its holder exits
        for (LockFileContent.PermitRecord r : content.permits) {
            if (r.slot() == slot && pidOf(r.ownerId()) == pid) {
                h.ownerId(r.ownerId())
                        .host(Owner.parse(r.ownerId()).host())
                        .since(Instant.ofEpochMilli(r.sinceMillis()))
                        .token(r.token());
                break;
            }
        }
        return h.build();
    }

    // Comparators as classes, not built from method references: linking those costs a short
    // command (interlock status) a few milliseconds at its first use.

    /** Records by token, the newest first. */
    private static final Comparator<LockFileContent.Record> NEWEST_FIRST = new Comparator<>() {
        @Override
        public int compare(LockFileContent.Record a, LockFileContent.Record b) {
            return Long.compare(b.token(), a.token());
        }
    };

    /** Holders by mode, the reverse of the enum's order (exclusive before shared). */
    private static final Comparator<HolderInfo> EXCLUSIVE_FIRST = new Comparator<>() {
        @Override
        public int compare(HolderInfo a, HolderInfo b) {
            return b.mode().compareTo(a.mode());
        }
    };

    private static long pidOf(String ownerId) {
        try {
            return Owner.parse(ownerId).pid();
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /** Reads a lock file by its name in the directory {@code d}; O_NONBLOCK so that a FIFO planted there cannot block us. */
    private static LockFileContent readContent(int d, byte[] fileBytes) {
        int fd = LibcFiles.openat(d, fileBytes, FlockFiles.READ_ONLY_FLAGS, 0);
        if (fd < 0) {
            return null;
        }
        try {
            int[] len = new int[1];
            byte[] buf;
            try {
                buf = FlockFiles.readAll(fd, len);
            } catch (ErrnoException e) {
                return null; // unreadable: no recorded details, as for a file that cannot be opened
            }
            return LockFileContent.parse(buf, len[0]);
        } finally {
            LibcFiles.close(fd);
        }
    }

    /**
     * What {@code LockBackend.list} answers: every lock file of the space.
     *
     * @throws LockBackendException "no lock space at DIR (nothing was created)" if the lock
     *     directory does not exist: reading never creates it
     */
    List<LockInfo> list() {
        List<LockInfo> out = new ArrayList<>();
        backend.enter();
        try {
            int d = backend.readingDirFd();
            // The directory we hold, read through its descriptor, not the path it was opened by.
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(Path.of("/proc/self/fd/" + d))) {
                for (Path p : ds) {
                    String f = p.getFileName().toString();
                    Optional<String> name = NameMapping.nameOf(f);
                    if (name.isEmpty() && NameMapping.isHashed(f)) {
                        LockFileContent c = readContent(d, LibcFiles.cstring(f));
                        name = c == null ? Optional.empty() : c.storedName;
                    }
                    if (name.isPresent() && NameMapping.fileName(name.get()).equals(f)) {
                        out.add(inspectFile(d, name.get(), f, LibcFiles.cstring(f)));
                    }
                }
            } catch (IOException e) {
                String why = e instanceof FileSystemException && ((FileSystemException) e).getReason() != null
                        ? ((FileSystemException) e).getReason()
                        : e.getMessage();
                throw backend.failures.refused(null, "cannot list " + backend.dir + ": " + why, e);
            }
        } finally {
            backend.leave();
        }
        out.sort(Comparator.comparing(LockInfo::name));
        return out;
    }
}
