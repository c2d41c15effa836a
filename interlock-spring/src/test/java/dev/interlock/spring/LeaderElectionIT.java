package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Spring Integration's leader election ({@code LockRegistryLeaderInitiator}) over the registry, in
 * two JVMs ({@link LeaderWorker}) on every backend whose locks expire: the leader is stopped
 * (SIGSTOP) until the other node is elected, then resumed, then the new leader is killed (SIGKILL).
 *
 * <ul>
 *   <li>The other node is elected no sooner than the end of the stopped leader's lease (it was
 *       renewed a third of the time to live before the stop at the latest): never inside the
 *       margin that the stopped leader had to stop in.</li>
 *   <li>The resumed leader steps down within one heartbeat (plus scheduling slack), and is never
 *       elected again while the other node lives.</li>
 *   <li>The killed leader is replaced within its time to live plus one heartbeat.</li>
 * </ul>
 * Prints the figures measured (see README, Spring section).
 */
class LeaderElectionIT {
    static final long TTL_MS = 2000;
    static final long HEARTBEAT_MS = 500;
    /** Scheduling slack of a loaded two-core machine, for a JVM that has just been resumed. */
    static final long SLACK_MS = 1000;

    /** One node: its process and the events it printed, with the test's receipt time. */
    static final class Node implements AutoCloseable {
        final Process process;
        final List<long[]> events = new CopyOnWriteArrayList<>(); // {kind (1 granted, 0 revoked, 2 ready), nanos}

        Node(String uri) throws IOException {
            this(uri, "renewed");
        }

        Node(String uri, String lease) throws IOException {
            process = ChildJvm.builder(
                            LeaderWorker.class,
                            List.of(),
                            uri,
                            "leader",
                            Long.toString(TTL_MS),
                            Long.toString(HEARTBEAT_MS),
                            lease)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            Thread reader = new Thread(
                    () -> {
                        try (BufferedReader r = new BufferedReader(
                                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                            for (String line; (line = r.readLine()) != null; ) {
                                String[] f = line.split(" ");
                                switch (f[0]) {
                                    case "ready" -> events.add(new long[] {2, System.nanoTime()});
                                    case "granted" -> events.add(new long[] {1, Long.parseLong(f[1])});
                                    case "revoked" -> events.add(new long[] {0, Long.parseLong(f[1])});
                                    default -> {}
                                }
                            }
                        } catch (IOException e) {
                            // the process ended
                        }
                    },
                    "leader-node-reader");
            reader.setDaemon(true);
            reader.start();
        }

        long count(int kind) {
            return events.stream().filter(e -> e[0] == kind).count();
        }

        long last(int kind) {
            long t = Long.MIN_VALUE;
            for (long[] e : events) {
                if (e[0] == kind) {
                    t = e[1];
                }
            }
            return t;
        }

        boolean leader() {
            return count(1) > count(0);
        }

        /** Leadership intervals [granted, revoked), the last one open until {@code end}. */
        List<long[]> intervals(long end) {
            List<long[]> out = new ArrayList<>();
            long since = Long.MIN_VALUE;
            for (long[] e : events) {
                if (e[0] == 1) {
                    since = e[1];
                } else if (e[0] == 0 && since != Long.MIN_VALUE) {
                    out.add(new long[] {since, e[1]});
                    since = Long.MIN_VALUE;
                }
            }
            if (since != Long.MIN_VALUE) {
                out.add(new long[] {since, end});
            }
            return out;
        }

        void signal(String sig) throws Exception {
            Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid()))
                    .inheritIO()
                    .start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0)
                    .as("kill -" + sig)
                    .isTrue();
        }

        @Override
        public void close() throws Exception {
            if (process.isAlive()) {
                signal("CONT");
                process.getOutputStream().close();
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"dir", "postgres", "redis"})
    void aLeaderStoppedPastItsTimeToLive_stepsDownAtItsNextHeartbeat_andTheOtherIsElectedOnlyAfterItsLease(
            String backend, @TempDir Path work) throws Exception {
        String uri = switch (backend) {
            case "postgres" -> TestServers.postgresUri();
            case "redis" -> TestServers.redisUri();
            default -> backend + ":" + Files.createDirectory(work.resolve("locks"));
        };
        try (Node a = new Node(uri)) {
            await().atMost(Timing.seconds(60)).until(a::leader);
            try (Node b = new Node(uri)) {
                await().atMost(Timing.seconds(60)).until(() -> b.count(2) == 1);
                long stopped = System.nanoTime();
                a.signal("STOP");
                await().atMost(Timing.seconds(60)).until(b::leader);
                long elected = b.last(1);
                a.signal("CONT");
                long resumed = System.nanoTime();
                await().atMost(Timing.seconds(60)).until(() -> !a.leader());
                long steppedDown = a.last(0);
                long killed = System.nanoTime();
                b.process.destroyForcibly();
                await().atMost(Timing.seconds(60)).until(a::leader);
                long failover = a.last(1) - killed;
                long end = System.nanoTime();

                // Two leaders at once, outside the time the old one was frozen and could do nothing.
                long both = 0;
                for (long[] x : a.intervals(end)) {
                    for (long[] y : b.intervals(killed)) {
                        long from = Math.max(Math.max(x[0], y[0]), resumed);
                        long to = Math.min(x[1], y[1]);
                        both += Math.max(0, to - from);
                    }
                }
                System.out.printf(
                        "leader election on %s (ttl %dms, heartbeat %dms): other elected %dms after the stop;"
                                + " old leader stepped down %dms after its resume (two leaders for %dms); failover after kill -9 %dms%n",
                        backend,
                        TTL_MS,
                        HEARTBEAT_MS,
                        ms(elected - stopped),
                        ms(steppedDown - resumed),
                        ms(both),
                        ms(failover));

                assertThat(ms(elected - stopped))
                        .as("elected no sooner than the end of the stopped leader's lease (renewed"
                                + " at most a third of it before the stop)")
                        .isGreaterThanOrEqualTo(TTL_MS * 2 / 3);
                assertThat(ms(steppedDown - resumed))
                        .as("the old leader steps down within one heartbeat")
                        .isLessThanOrEqualTo(HEARTBEAT_MS + SLACK_MS);
                assertThat(a.count(1))
                        .as("the old leader is not elected again while the other lives")
                        .isEqualTo(2);
                assertThat(ms(failover))
                        .as("a killed leader is replaced within its time to live and a heartbeat")
                        .isLessThanOrEqualTo(TTL_MS + HEARTBEAT_MS + SLACK_MS);
            }
        }
    }

    /**
     * Without background renewal (Spring's JDBC way) the heartbeat is what keeps the lease: a
     * healthy leader stays the only leader for many times its time to live.
     */
    @ParameterizedTest
    @ValueSource(strings = {"postgres", "redis"})
    void withoutBackgroundRenewal_theHeartbeatKeepsTheOneLeader(String backend) throws Exception {
        String uri = backend.equals("postgres") ? TestServers.postgresUri() : TestServers.redisUri();
        try (Node a = new Node(uri, "fixed")) {
            await().atMost(Timing.seconds(60)).until(a::leader);
            try (Node b = new Node(uri, "fixed")) {
                await().atMost(Timing.seconds(60)).until(() -> b.count(2) == 1);
                await().during(Duration.ofMillis(TTL_MS * 3))
                        .atMost(Duration.ofMillis(TTL_MS * 4))
                        .until(() -> a.leader() && !b.leader());
                assertThat(a.count(0)).as("never stepped down").isZero();
                assertThat(b.count(1)).as("never elected").isZero();
            }
        }
    }

    private static long ms(long nanos) {
        return Duration.ofNanos(nanos).toMillis();
    }
}
