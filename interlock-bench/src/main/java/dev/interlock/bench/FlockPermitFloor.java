package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.LibcFiles;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The raw floors of a {@code flock:} permit against its lock: the system calls of one uncontended
 * cycle of each design, made straight through the backend's native layer (no parsing, no
 * decisions), alternated in one JVM on one file system, so that the ratios say what the kernel's
 * work costs (docs/semaphores.md, "Cost"; docs/benchmarks.md, "The floor of a `flock:` permit").
 * The cycles:
 * <ul>
 *   <li>{@code lock}: the lock file opened, {@code flock(LOCK_EX)}, its size read ({@code statx}),
 *       its record read and written, closed: {@code flock:}'s exclusive lock, six calls;</li>
 *   <li>{@code permit}: the permit as built, thirteen calls: the gate opened and locked, the
 *       waiters' marks asked ({@code F_OFD_GETLK}), the lock file opened and locked shared and its
 *       record read, a slot opened and locked, the size read, the record written, the gate closed;
 *       at release the slot and the lock file closed;</li>
 *   <li>{@code one-file}: a design that keeps everything in the lock file (not built: it would
 *       change the format), ten calls: opened and locked shared; the gate an open file
 *       description lock on byte 0 ({@code F_OFD_SETLK}), the marks asked of byte 1, a slot the
 *       lock of byte 2 + k, the record read, the size read, the record written, byte 0 unlocked;
 *       at release one close;</li>
 *   <li>{@code bare}: the least any permit on {@code flock:} can do, seven calls, and not a correct
 *       permit: the lock file opened and locked shared (which keeps plain locks out), a slot byte
 *       locked (the count), the record read, the size read, the record written (the token), closed;
 *       without the gate the token's read-modify-write is not serialised and waiters have no
 *       order.</li>
 * </ul>
 * The backend's own lock and permit run in the same rounds, on a space of their own in the same
 * directory, to show what the implementation adds to its floor.
 *
 * {@snippet lang="shell" :
 * ./mvnw -B -ntp -q -o -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.FlockPermitFloor 30 5000 /tmp
 * }
 * (rounds, cycles per block, the directory to make a fresh space in)
 */
public final class FlockPermitFloor {
    private FlockPermitFloor() {}

    private static final int OPEN = LibcFiles.O_RDWR | LibcFiles.O_NOCTTY | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC;
    private static final short F_RDLCK = 0;
    private static final short F_WRLCK = 1;
    private static final short F_UNLCK = 2;
    /** A record of the size the backend's lock file has (token, holder) and a permit's (token, limit, a holder's record). */
    private static final byte[] LOCK_RECORD = record(112);

    private static final byte[] PERMIT_RECORD = record(272);

    private static byte[] record(int size) {
        byte[] r = new byte[size];
        Arrays.fill(r, (byte) 'x');
        byte[] head = "interlock-flock/1 token=".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(head, 0, r, 0, head.length);
        r[size - 1] = '\n';
        return r;
    }

    /** The files of the floors, opened by name as the backend opens them. */
    private static final class Space {
        final int dir;
        final int gates;
        final byte[] lock = LibcFiles.cstring("l");
        final byte[] permit = LibcFiles.cstring("p");
        final byte[] oneFile = LibcFiles.cstring("q");
        final byte[][] slots = {LibcFiles.cstring("p+0"), LibcFiles.cstring("p+1"), LibcFiles.cstring("p+2")};
        final byte[] buf = new byte[512];
        final byte[] statx = new byte[256];
        int cycle;

        Space(Path root) throws Exception {
            Path gatesDir = Files.createDirectories(root.resolve(".gates"));
            Files.write(root.resolve("l"), LOCK_RECORD);
            Files.write(root.resolve("p"), PERMIT_RECORD);
            Files.write(root.resolve("q"), PERMIT_RECORD);
            Files.write(gatesDir.resolve("p"), new byte[0]);
            for (int i = 0; i < 3; i++) {
                Files.write(gatesDir.resolve("p+" + i), new byte[0]);
            }
            dir = open(LibcFiles.AT_FDCWD, LibcFiles.path(root), LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY);
            gates = open(LibcFiles.AT_FDCWD, LibcFiles.path(gatesDir), LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY);
        }
    }

    private static int open(int dir, byte[] name, int flags) {
        int fd = LibcFiles.openat(dir, name, flags | LibcFiles.O_CLOEXEC, 0);
        if (fd < 0) {
            throw new IllegalStateException("open failed");
        }
        return fd;
    }

    private static void ok(long r) {
        if (r < 0) {
            throw new IllegalStateException("a system call failed");
        }
    }

    /** A {@code struct flock} of {@code type} on {@code len} bytes from {@code start}. */
    private static byte[] range(short type, long start, long len) {
        byte[] b = new byte[LibcFiles.FLOCK_STRUCT_SIZE];
        ByteBuffer.wrap(b)
                .order(ByteOrder.nativeOrder())
                .putShort(0, type)
                .putShort(2, (short) 0)
                .putLong(8, start)
                .putLong(16, len);
        return b;
    }

    private static final byte[] WHOLE_WRITE = range(F_WRLCK, 0, 0);
    private static final byte[] GATE_BYTE = range(F_WRLCK, 0, 1);
    private static final byte[] GATE_BYTE_FREE = range(F_UNLCK, 0, 1);
    private static final byte[][] SLOT_BYTES = {range(F_WRLCK, 2, 1), range(F_WRLCK, 3, 1), range(F_WRLCK, 4, 1)};

    private static void lockCycle(Space s) {
        int fd = open(s.dir, s.lock, OPEN);
        ok(LibcFiles.flock(fd, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB));
        ok(LibcFiles.statx(fd, LibcFiles.EMPTY_PATH, LibcFiles.AT_EMPTY_PATH, LibcFiles.STATX_BASIC_STATS, s.statx));
        ok(LibcFiles.pread(fd, s.buf, 512, 0));
        ok(LibcFiles.pwrite(fd, LOCK_RECORD, LOCK_RECORD.length, 0));
        ok(LibcFiles.close(fd));
    }

    private static void permitCycle(Space s) {
        int gate = open(s.gates, s.permit, OPEN);
        ok(LibcFiles.flock(gate, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB));
        byte[] marks = WHOLE_WRITE.clone();
        ok(LibcFiles.fcntl(gate, LibcFiles.F_OFD_GETLK, marks));
        int fd = open(s.dir, s.permit, OPEN);
        ok(LibcFiles.flock(fd, LibcFiles.LOCK_SH | LibcFiles.LOCK_NB));
        ok(LibcFiles.pread(fd, s.buf, 512, 0));
        int slot = open(s.gates, s.slots[s.cycle++ % 3], OPEN);
        ok(LibcFiles.flock(slot, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB));
        ok(LibcFiles.statx(fd, LibcFiles.EMPTY_PATH, LibcFiles.AT_EMPTY_PATH, LibcFiles.STATX_BASIC_STATS, s.statx));
        ok(LibcFiles.pwrite(fd, PERMIT_RECORD, PERMIT_RECORD.length, 0));
        ok(LibcFiles.close(gate));
        ok(LibcFiles.close(slot)); // the release
        ok(LibcFiles.close(fd));
    }

    private static void oneFileCycle(Space s) {
        int fd = open(s.dir, s.oneFile, OPEN);
        ok(LibcFiles.flock(fd, LibcFiles.LOCK_SH | LibcFiles.LOCK_NB));
        ok(LibcFiles.fcntl(fd, LibcFiles.F_OFD_SETLK, GATE_BYTE));
        byte[] marks = range(F_WRLCK, 1, 1);
        ok(LibcFiles.fcntl(fd, LibcFiles.F_OFD_GETLK, marks));
        ok(LibcFiles.fcntl(fd, LibcFiles.F_OFD_SETLK, SLOT_BYTES[s.cycle++ % 3]));
        ok(LibcFiles.pread(fd, s.buf, 512, 0));
        ok(LibcFiles.statx(fd, LibcFiles.EMPTY_PATH, LibcFiles.AT_EMPTY_PATH, LibcFiles.STATX_BASIC_STATS, s.statx));
        ok(LibcFiles.pwrite(fd, PERMIT_RECORD, PERMIT_RECORD.length, 0));
        ok(LibcFiles.fcntl(fd, LibcFiles.F_OFD_SETLK, GATE_BYTE_FREE));
        ok(LibcFiles.close(fd)); // the release
    }

    private static void bareCycle(Space s) {
        int fd = open(s.dir, s.oneFile, OPEN);
        ok(LibcFiles.flock(fd, LibcFiles.LOCK_SH | LibcFiles.LOCK_NB));
        ok(LibcFiles.fcntl(fd, LibcFiles.F_OFD_SETLK, SLOT_BYTES[s.cycle++ % 3]));
        ok(LibcFiles.pread(fd, s.buf, 512, 0));
        ok(LibcFiles.statx(fd, LibcFiles.EMPTY_PATH, LibcFiles.AT_EMPTY_PATH, LibcFiles.STATX_BASIC_STATS, s.statx));
        ok(LibcFiles.pwrite(fd, PERMIT_RECORD, PERMIT_RECORD.length, 0));
        ok(LibcFiles.close(fd)); // the release
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 5_000;
        Path parent = Path.of(args.length > 2 ? args[2] : System.getProperty("java.io.tmpdir"));
        Path root = Files.createTempDirectory(parent, "flock-permit-floor");
        Space s = new Space(root);
        try (LockSpace space = Interlock.open("flock:" + root.resolve("interlock"))) {
            Map<String, Runnable> cycles = new LinkedHashMap<>();
            cycles.put("lock floor", () -> lockCycle(s));
            cycles.put("permit floor (as built)", () -> permitCycle(s));
            cycles.put("one-file floor (not built)", () -> oneFileCycle(s));
            cycles.put("bare floor (no gate: not a permit)", () -> bareCycle(s));
            cycles.put("Interlock's lock", () -> {
                try (Lease l = space.lock("l").tryAcquire().orElseThrow()) {
                    s.cycle += (int) (l.token() & 1);
                }
            });
            cycles.put("Interlock's permit", () -> {
                try (Lease l = space.lock("p").limit(3).tryAcquire().orElseThrow()) {
                    s.cycle += (int) (l.token() & 1);
                }
            });
            List<String> names = List.copyOf(cycles.keySet());
            for (Runnable c : cycles.values()) {
                for (int i = 0; i < ops * 2; i++) {
                    c.run(); // warm-up
                }
            }
            Map<String, double[]> times = new LinkedHashMap<>();
            names.forEach(n -> times.put(n, new double[rounds]));
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < names.size(); k++) {
                    String name = names.get((k + r) % names.size()); // the order rotated every round
                    Runnable c = cycles.get(name);
                    long t0 = System.nanoTime();
                    for (int i = 0; i < ops; i++) {
                        c.run();
                    }
                    times.get(name)[r] = (double) (System.nanoTime() - t0) / ops;
                }
            }
            double[] lock = times.get("lock floor");
            System.out.printf("flock: permit floors, %d rounds x %d cycles, in %s%n", rounds, ops, root);
            for (String name : names) {
                double[] t = times.get(name);
                double[] ratio = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ratio[r] = t[r] / lock[r];
                }
                Arrays.sort(ratio);
                System.out.printf(
                        "  %-36s median %7.2f us (fastest %6.2f)  / lock floor %.3f (IQR %.3f-%.3f)%n",
                        name,
                        LockThroughput.median(t) / 1000,
                        Arrays.stream(t).min().orElse(Double.NaN) / 1000,
                        LockThroughput.median(ratio),
                        ratio[rounds / 4],
                        ratio[rounds * 3 / 4]);
            }
        }
    }
}
