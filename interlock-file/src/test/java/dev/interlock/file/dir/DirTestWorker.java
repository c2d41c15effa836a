package dev.interlock.file.dir;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * Worker processes for the {@code dir:} fault tests. First argument is the job:
 * <ul>
 *   <li>{@code loop URI NAME MODES ITERATIONS LOG COUNTER}: like the testkit's worker, but every
 *       critical section is appended to LOG at once (so a worker killed with -9 leaves what it
 *       did), and the counter is updated by the safe-update recipe (temp file + rename);</li>
 *   <li>{@code storm URI ROOT NAME ITERATIONS LOG}: acquire, log, then abandon the lock as a
 *       crashed holder would: rename our gate to one owned by a process that does not exist, so
 *       every other worker races to reclaim it;</li>
 *   <li>{@code hold URI NAME MODE LEASE_MS}: acquire, print {@code HELD <token> <pid>}, hold until
 *       stdin closes, release;</li>
 *   <li>{@code permit URI NAME LIMIT LEASE_MS}: the same with a permit of a semaphore of LIMIT
 *       (mode {@code P<limit>} of {@code hold});</li>
 *   <li>{@code once URI NAME MODE}: one acquire (used with -Dinterlock.dir.crashAt); MODE
 *       {@code P<n>} is a permit of a semaphore of n.</li>
 * </ul>
 */
public final class DirTestWorker {
    private DirTestWorker() {}

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "loop":
                loop(args[1], args[2], args[3], Integer.parseInt(args[4]), Path.of(args[5]), Path.of(args[6]));
                break;
            case "storm":
                storm(args[1], Path.of(args[2]), args[3], Integer.parseInt(args[4]), Path.of(args[5]));
                break;
            case "hold":
                hold(args[1], args[2], Mode.parse(args[3]), 0, Long.parseLong(args[4]));
                break;
            case "permit":
                hold(args[1], args[2], Mode.EXCLUSIVE, Integer.parseInt(args[3]), Long.parseLong(args[4]));
                break;
            case "once":
                try (LockSpace locks = Interlock.open(args[1]);
                        Lease l = args[3].startsWith("P")
                                ? locks.lock(args[2])
                                        .limit(Integer.parseInt(args[3].substring(1)))
                                        .acquire(Duration.ofSeconds(30))
                                : locks.acquire(args[2], Mode.parse(args[3]), Duration.ofSeconds(30))) {
                    System.out.println("HELD " + l.token());
                }
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }

    private static void append(Path log, String line) throws Exception {
        Files.writeString(
                log,
                line + "\n",
                StandardCharsets.US_ASCII,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND,
                StandardOpenOption.WRITE);
    }

    private static void loop(String uri, String name, String modes, int iterations, Path log, Path counter)
            throws Exception {
        System.out.println("READY");
        System.out.flush();
        try (LockSpace locks = Interlock.open(uri)) {
            for (int i = 0; i < iterations; i++) {
                Mode mode = modes.equals("ex")
                        ? Mode.EXCLUSIVE
                        : modes.equals("sh")
                                ? Mode.SHARED
                                : ThreadLocalRandom.current().nextInt(3) == 0 ? Mode.EXCLUSIVE : Mode.SHARED;
                try (Lease lease = locks.acquire(name, mode, Duration.ofMinutes(2))) {
                    long enter = System.nanoTime();
                    if (mode == Mode.EXCLUSIVE) {
                        String s = Files.readString(counter).trim();
                        Path tmp = counter.resolveSibling(
                                "counter." + ProcessHandle.current().pid());
                        Files.writeString(tmp, Long.toString(Long.parseLong(s) + 1));
                        Files.move(tmp, counter, StandardCopyOption.ATOMIC_MOVE);
                    } else {
                        Files.readAllBytes(counter);
                    }
                    long exit = System.nanoTime();
                    append(log, mode.shortName() + " " + lease.token() + " " + enter + " " + exit);
                }
            }
        }
    }

    private static void storm(String uri, Path root, String name, int iterations, Path log) throws Exception {
        Path lockDir = root.resolve(DirNames.encode(name));
        DirSelf self = DirSelf.current();
        try (LockSpace locks = Interlock.open(uri)) {
            System.out.println("READY");
            System.out.flush();
            for (int i = 0; i < iterations; i++) {
                Lease lease = locks.acquire(name, Duration.ofMinutes(2));
                long enter = System.nanoTime();
                Thread.onSpinWait();
                long exit = System.nanoTime();
                append(log, "EX " + lease.token() + " " + enter + " " + exit);
                // Crash as a holder would: the gate now names a process that cannot exist (beyond pid_max).
                DirEntries.Holder dead = new DirEntries.Holder(
                        60_000,
                        0,
                        4_194_305 + ThreadLocalRandom.current().nextInt(1000),
                        1,
                        self.pidNs,
                        self.bootId,
                        "dead" + Long.toHexString(lease.token()),
                        "crashed");
                String mine;
                try (Stream<Path> s = Files.list(lockDir)) {
                    mine = s.map(p -> p.getFileName().toString())
                            .filter(n -> n.startsWith("X." + lease.token() + "."))
                            .findFirst()
                            .orElseThrow();
                }
                Files.move(lockDir.resolve(mine), lockDir.resolve(DirEntries.Gate.writer(lease.token(), 0, dead)));
                lease.close(); // no longer ours: must not free anything
            }
        }
    }

    /** Holds {@code name} in {@code mode}, or one permit of {@code limit} if it is not 0, until stdin closes. */
    private static void hold(String uri, String name, Mode mode, int limit, long leaseMs) throws Exception {
        try (LockSpace locks = Interlock.open(uri);
                Lease l = (limit > 0
                                ? locks.lock(name).limit(limit)
                                : locks.lock(name).mode(mode))
                        .lease(Duration.ofMillis(leaseMs))
                        .acquire(Duration.ofSeconds(30))) {
            System.out.println(
                    "HELD " + l.token() + " " + ProcessHandle.current().pid());
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // hold until stdin closes
            }
        }
    }
}
