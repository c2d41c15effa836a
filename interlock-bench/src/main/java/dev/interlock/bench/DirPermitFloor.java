package dev.interlock.bench;

import com.sun.jna.Native;
import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The raw floors of a {@code dir:} permit against its lock: the system calls of one uncontended
 * cycle of each design, made straight through the same native layer as the backend (no parsing,
 * no decisions, no Java objects of the protocol), alternated in the same JVM on the same file
 * system, so that the ratios say what the directory operations themselves cost
 * (docs/dir-protocol.md 4.8 and 9; docs/benchmarks.md, "The floor of a `dir:` permit").
 *
 * <p>Every cycle starts as the backend's does (the root path looked up, the lock directory opened
 * and its identity read) and lists the lock directory once after its own change, as a grant
 * must. The cycles:
 * <ul>
 *   <li>{@code lock}: the gate renamed in ({@code F} to {@code X}) and out, as {@code dir:}'s
 *       exclusive lock does (4.2, 4.4);</li>
 *   <li>{@code permit}: today's permit (4.8): the gate renamed for a token, a heartbeat {@code B}
 *       and a permit entry {@code P} created ({@code open(O_CREAT|O_EXCL)} and {@code close}),
 *       both unlinked at release;</li>
 *   <li>{@code permit-mknod}: the same directory changes, each create one {@code mknodat(S_IFREG)}
 *       (the kernel's exclusive create without a descriptor) instead of open and close;</li>
 *   <li>{@code permit-link}: the same directory changes, the permit entry made as a second name
 *       of the heartbeat just created ({@code linkat}: no second inode), and both together;</li>
 *   <li>{@code slot}: the slot-gate design (proposed, not built): the gate renamed for a token, a
 *       slot gate renamed from free to held and back: three renames, no creates;</li>
 *   <li>{@code slot-dir}: the same, the slots in a directory of their own ({@code slots.<n>},
 *       made once complete, so that no index can ever have two files), opened every cycle;</li>
 *   <li>{@code rename3}: the lock's cycle with one more rename of the gate to itself's next name,
 *       a check that the slot design's cost is that of its renames (the same directory changes as
 *       {@code slot}, on one file).</li>
 * </ul>
 * The backend's own exclusive lock and permit run in the same rounds (on their own lock space in
 * the same root), to show what the implementation adds to its floor. Each single operation is also timed alone, in the same rounds, so that the difference can be
 * read as a sum.
 *
 * {@snippet lang="shell" :
 * ./mvnw -B -ntp -q -o -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.DirPermitFloor 30 2000 /tmp /var/tmp
 * }
 * (rounds, calls per block, then one or more directories to make a fresh root in)
 */
public final class DirPermitFloor {
    private DirPermitFloor() {}

    /** {@code mknodat(2)}, bound directly as the backend binds its calls (JDK 17: JNA direct mapping). */
    static final class Mknod {
        static {
            Native.register(Mknod.class, "c");
        }

        static native int mknodat(int dirfd, byte[] path, int mode, long dev);
    }

    private static final int S_IFREG = 0100000;
    private static final int DIR_FLAGS =
            LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC;
    /** A holder field as the backend writes it (lease, since, pid, start, pid namespace, boot id, nonce, host). */
    private static final String HOLDER =
            "30000.1795805959.13733.4108704.4026531836.56623308eb8f43989d9efae3a81b576c.e5c58c4800a50382.vm";

    private static final String NONCE = "e5c58c4800a50382";

    /** One root: its path and descriptor, and the state (gate and slot names) each cycle left. */
    static final class Root {
        final Path path;
        final int fd;
        long lockToken;
        long permitToken;
        long renameToken;

        Root(Path path) throws Exception {
            this.path = path;
            this.fd = NativeFiles.openat(LibcFiles.AT_FDCWD, path.toString(), DIR_FLAGS, 0);
            for (String d : List.of("lock", "permit", "slot", "slot-dir", "rename3", "ops")) {
                Path dir = Files.createDirectory(path.resolve(d));
                Files.writeString(dir.resolve("name"), "interlock-dir 1\nname " + d + "\n");
                Files.createFile(dir.resolve("F.0.0." + NONCE));
            }
            Path slots = Files.createDirectory(path.resolve("slot-dir").resolve("slots.3"));
            for (int i = 0; i < 3; i++) {
                Files.createFile(path.resolve("slot").resolve("S." + i + ".3.F." + NONCE));
                Files.createFile(slots.resolve("S." + i + ".3.F." + NONCE));
            }
        }

        /** The backend's start of every try: the root path's identity, the lock directory opened and its identity. */
        int open(String dir) {
            NativeFiles.statx(LibcFiles.AT_FDCWD, path.toString(), 0);
            int d = NativeFiles.openat(fd, dir, DIR_FLAGS, 0);
            NativeFiles.fstat(d);
            return d;
        }

        void lock() {
            int d = open("lock");
            long t = lockToken;
            String held = "X." + (t + 1) + ".0." + HOLDER;
            NativeFiles.renameat(d, "F." + t + "." + t + "." + NONCE, d, held);
            NativeFiles.list(d);
            NativeFiles.renameat(d, held, d, "F." + (t + 1) + "." + (t + 1) + "." + NONCE);
            lockToken = t + 1;
            NativeFiles.close(d);
        }

        void permit(boolean mknod, boolean link) {
            int d = open("permit");
            long t = permitToken;
            NativeFiles.renameat(d, "F." + t + ".0." + NONCE, d, "F." + (t + 1) + ".0." + NONCE);
            String beat = "B." + (t + 1) + ".0." + HOLDER;
            String entry = "P." + (t + 1) + ".3." + HOLDER;
            create(d, beat, mknod);
            if (link) {
                NativeFiles.linkat(d, beat, d, entry, 0);
            } else {
                create(d, entry, mknod);
            }
            NativeFiles.list(d);
            NativeFiles.unlinkat(d, beat, 0);
            NativeFiles.unlinkat(d, entry, 0);
            permitToken = t + 1;
            NativeFiles.close(d);
        }

        /** A slot-gate design's state: where its slots are ({@code null}: beside the gate), its gate's token, the free slot it left. */
        static final class Slots {
            final String dir;
            final String sub;
            long token;
            String free = "S.0.3.F." + NONCE;

            Slots(String dir, String sub) {
                this.dir = dir;
                this.sub = sub;
            }
        }

        final Slots beside = new Slots("slot", null);
        /** The slots in their own directory {@code slots.<n>}, made once complete as 4.1 makes a lock directory. */
        final Slots ownDir = new Slots("slot-dir", "slots.3");

        void slot(Slots s) {
            int d = open(s.dir);
            long t = s.token;
            NativeFiles.renameat(d, "F." + t + ".0." + NONCE, d, "F." + (t + 1) + ".0." + NONCE);
            int slots = s.sub == null ? d : NativeFiles.openat(d, s.sub, DIR_FLAGS, 0);
            String held = "S.0.3." + (t + 1) + ".0." + HOLDER;
            NativeFiles.renameat(slots, s.free, slots, held);
            NativeFiles.list(d);
            s.free = "S.0.3.F." + Long.toHexString(t + 1) + NONCE.substring(0, 8);
            NativeFiles.renameat(slots, held, slots, s.free);
            s.token = t + 1;
            if (slots != d) {
                NativeFiles.close(slots);
            }
            NativeFiles.close(d);
        }

        void rename3() {
            int d = open("rename3");
            long t = renameToken;
            NativeFiles.renameat(d, "F." + t + "." + t + "." + NONCE, d, "F." + (t + 1) + "." + t + "." + NONCE);
            String held = "X." + (t + 2) + ".0." + HOLDER;
            NativeFiles.renameat(d, "F." + (t + 1) + "." + t + "." + NONCE, d, held);
            NativeFiles.list(d);
            NativeFiles.renameat(d, held, d, "F." + (t + 2) + "." + (t + 2) + "." + NONCE);
            renameToken = t + 2;
            NativeFiles.close(d);
        }

        private static void create(int d, String name, boolean mknod) {
            if (mknod) {
                if (Mknod.mknodat(d, LibcFiles.cstring(name), S_IFREG | 0444, 0) != 0) {
                    throw new IllegalStateException("mknodat " + name + " failed");
                }
            } else {
                NativeFiles.close(NativeFiles.openat(d, name, LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0444));
            }
        }

        // Single operations, each as a pair that leaves the directory as it found it; per operation is half.
        private long opsToken;

        void renamePair(int d) {
            long t = opsToken;
            String held = "X." + (t + 1) + ".0." + HOLDER;
            NativeFiles.renameat(d, "F." + t + "." + t + "." + NONCE, d, held);
            NativeFiles.renameat(d, held, d, "F." + (t + 1) + "." + (t + 1) + "." + NONCE);
            opsToken = t + 1;
        }

        void linkUnlink(int d) {
            NativeFiles.linkat(d, "name", d, "P." + opsToken + ".3." + HOLDER, 0);
            NativeFiles.unlinkat(d, "P." + opsToken + ".3." + HOLDER, 0);
        }

        void createUnlink(int d, boolean mknod) {
            String name = "B." + opsToken + ".0." + HOLDER;
            create(d, name, mknod);
            NativeFiles.unlinkat(d, name, 0);
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 2_000;
        List<Path> bases = new ArrayList<>();
        for (int i = 2; i < args.length; i++) {
            bases.add(Path.of(args[i]));
        }
        if (bases.isEmpty()) {
            bases = List.of(Path.of("/tmp"), Path.of("/var/tmp"));
        }
        for (Path base : bases) {
            Root r = new Root(Files.createTempDirectory(base, "dir-permit-floor"));
            run(base, r, rounds, ops);
        }
    }

    private static void run(Path base, Root r, int rounds, int ops) throws Exception {
        try (LockSpace api = Interlock.open("dir:" + Files.createDirectory(r.path.resolve("api")))) {
            run(base, r, api, rounds, ops);
        }
    }

    private static void run(Path base, Root r, LockSpace api, int rounds, int ops) {
        int opsFd = NativeFiles.openat(r.fd, "ops", DIR_FLAGS, 0);
        Map<String, Runnable> kinds = new LinkedHashMap<>();
        kinds.put("lock", r::lock);
        kinds.put("permit", () -> r.permit(false, false));
        kinds.put("permit-mknod", () -> r.permit(true, false));
        kinds.put("permit-link", () -> r.permit(false, true));
        kinds.put("permit-mknod-link", () -> r.permit(true, true));
        kinds.put("slot", () -> r.slot(r.beside));
        kinds.put("slot-dir", () -> r.slot(r.ownDir));
        kinds.put("rename3", r::rename3);
        kinds.put(
                "api: exclusive lock",
                () -> api.lock("ab-lock").tryAcquire().orElseThrow().close());
        kinds.put(
                "api: permit of limit(3)",
                () -> api.lock("ab-permit").limit(3).tryAcquire().orElseThrow().close());
        kinds.put("op: open (statx root, openat, fstat, close)", () -> NativeFiles.close(r.open("ops")));
        kinds.put("op: list (openat ., getdents64 x2, close)", () -> NativeFiles.list(opsFd));
        kinds.put("op: rename x2", () -> r.renamePair(opsFd));
        kinds.put("op: create (open+close) + unlink", () -> r.createUnlink(opsFd, false));
        kinds.put("op: create (mknodat) + unlink", () -> r.createUnlink(opsFd, true));
        kinds.put("op: link + unlink (of an existing file)", () -> r.linkUnlink(opsFd));
        List<String> names = new ArrayList<>(kinds.keySet());
        for (String k : names) {
            block(kinds.get(k), ops * 3); // warm-up
        }
        double[][] ns = new double[names.size()][rounds];
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < names.size(); i++) {
                int k = (i + round) % names.size(); // the order rotates every round
                ns[k][round] = block(kinds.get(names.get(k)), ops);
            }
        }
        System.out.printf(
                "dir: raw floors on %s (%s), %d rounds x %d cycles, order rotated every round%n",
                base, fsType(base), rounds, ops);
        System.out.printf("  %-46s %10s %10s   %s%n", "cycle", "median", "fastest", "/ lock per round: median (IQR)");
        for (int k = 0; k < names.size(); k++) {
            double[] ratio = new double[rounds];
            for (int round = 0; round < rounds; round++) {
                ratio[round] = ns[k][round] / ns[0][round];
            }
            Arrays.sort(ratio);
            System.out.printf(
                    "  %-46s %7.1f µs %7.1f µs   %.3f (%.3f-%.3f)%n",
                    names.get(k),
                    LockThroughput.median(ns[k]) / 1000,
                    Arrays.stream(ns[k]).min().orElse(Double.NaN) / 1000,
                    LockThroughput.median(ratio),
                    ratio[rounds / 4],
                    ratio[rounds * 3 / 4]);
        }
        NativeFiles.close(opsFd);
    }

    /** {@code ops} cycles; ns per cycle. */
    private static double block(Runnable cycle, int ops) {
        long t0 = System.nanoTime();
        for (int i = 0; i < ops; i++) {
            cycle.run();
        }
        return (double) (System.nanoTime() - t0) / ops;
    }

    private static String fsType(Path p) {
        try {
            return Files.getFileStore(p).type();
        } catch (Exception e) {
            return "?";
        }
    }
}
