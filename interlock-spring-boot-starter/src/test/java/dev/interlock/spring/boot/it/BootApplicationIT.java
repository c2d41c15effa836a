package dev.interlock.spring.boot.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real Boot application per backend family ({@code dir:}, {@code jdbc:} on PostgreSQL through the
 * application's DataSource, {@code redis:}), started twice at once: one instance in this JVM, one in
 * a child JVM ({@link LockedJobApplication}). Checks that
 * <ol>
 *   <li>the {@code @SchedulerLock} job runs once per tick across both: from the attempts both
 *       instances logged, no attempt made within {@code lockAtLeastFor} (500 ms) of another
 *       instance's grant was granted too (the guarantee; a fire delayed longer on a loaded
 *       machine may run again, as with any ShedLock provider), and at least three ticks had
 *       attempts by both and exactly one grant;</li>
 *   <li>{@code /actuator/health/interlock} is UP, then DOWN with a reason while the server is
 *       stopped (the lock directory replaced by a file, for {@code dir:}), then UP again;</li>
 *   <li>{@code /actuator/locks} lists the lock with its holder, and shows no password (the
 *       DataSource's, Redis's: the server requires one);</li>
 *   <li>the waits and holds reach the test tracer as spans, the job's wait a child of the
 *       scheduled task's span, with the lock name and the fencing token.</li>
 * </ol>
 */
class BootApplicationIT {
    /** Ticks with attempts by both instances and one grant, to wait for. */
    private static final int TICKS = 3;

    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path dir;

    @Test
    void dirBackend() throws Exception {
        Path locks = dir.resolve("locks");
        Files.createDirectories(locks);
        Path away = dir.resolve("locks.away");
        ItServers.Server blockDirectory = new ItServers.Server() {
            @Override
            public void stop() {
                try {
                    Files.move(locks, away);
                    Files.writeString(locks, "not a directory");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public void start() {
                try {
                    Files.delete(locks);
                    Files.move(away, locks);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }

            @Override
            public void close() {}
        };
        scenario(List.of("--interlock.uri=dir:" + locks), blockDirectory);
    }

    @Test
    void jdbcOnPostgresThroughTheDataSource() throws Exception {
        try (ItServers.Postgres pg = new ItServers.Postgres()) {
            scenario(
                    List.of(
                            "--spring.datasource.url=" + pg.url(),
                            "--spring.datasource.password=s3cret-never-shown",
                            "--spring.datasource.hikari.connection-timeout=1000",
                            "--interlock.jdbc.table=boot_it_locks",
                            "--interlock.jdbc.create-table=true"),
                    pg);
        }
    }

    @Test
    void redisBackend() throws Exception {
        try (ItServers.Redis redis = new ItServers.Redis("s3cret-never-shown")) {
            scenario(
                    List.of(
                            "--interlock.uri=" + redis.uri() + "?timeout=1s",
                            "--interlock.redis.key-prefix=boot-it-"
                                    + UUID.randomUUID().toString().substring(0, 8) + ":"),
                    redis);
        }
    }

    private void scenario(List<String> backendArgs, ItServers.Server server) throws Exception {
        Path log = dir.resolve("runs.log");
        List<String> args = new ArrayList<>(backendArgs);
        args.addAll(List.of(
                "--it.log=" + log,
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--management.endpoints.web.exposure.include=health,locks",
                "--management.endpoint.health.show-details=always",
                "--spring.main.banner-mode=off"));
        Process other = ChildJvm.builder(LockedJobApplication.class, List.of(), args.toArray(String[]::new))
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("other.out").toFile())
                .start();
        try (ConfigurableApplicationContext app = LockedJobApplication.start(args.toArray(String[]::new))) {
            int port = app.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
            long self = ProcessHandle.current().pid();
            long otherPid = other.pid();

            // 1. Once per tick across both instances, judged from the logged attempts; a violation ends the wait at
            // once.
            await().atMost(Timing.seconds(60))
                    .until(() -> !other.isAlive()
                            || !violations(attempts(log)).isEmpty()
                            || ticksWithOneGrant(attempts(log), self, otherPid) >= TICKS);
            assertThat(other.isAlive())
                    .as("the other instance runs (its output: %s)", dir.resolve("other.out"))
                    .isTrue();
            List<Attempt> attempts = attempts(log);
            assertThat(violations(attempts))
                    .as("attempts granted within the lockAtLeastFor of another instance's grant, of %s", attempts)
                    .isEmpty();
            assertThat(ticksWithOneGrant(attempts, self, otherPid)).isGreaterThanOrEqualTo(TICKS);
            assertThat(lines(log).stream().filter(l -> l.startsWith("ran ")).count())
                    .as("runs, at most one per grant")
                    .isLessThanOrEqualTo(
                            attempts.stream().filter(Attempt::granted).count());

            // 2. Health UP, with the details.
            HttpResponse<String> up = get(port, "/actuator/health/interlock");
            assertThat(up.statusCode()).as(up.body()).isEqualTo(200);
            assertThat(up.body()).contains("\"UP\"").contains("\"locks\"").doesNotContain("s3cret");

            // 3. The locks endpoint: the lock and a holder while one is held; no password.
            LockSpace space = app.getBean(LockSpace.class);
            SimpleTracer tracer = app.getBean(SimpleTracer.class);
            long token;
            try (Lease lease = space.tryAcquire("it-endpoint").orElseThrow()) {
                token = lease.token();
                HttpResponse<String> listed = get(port, "/actuator/locks");
                assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
                assertThat(listed.body())
                        .contains("\"it-endpoint\"")
                        .contains(lease.owner().id())
                        .contains(Long.toString(token))
                        .doesNotContain("s3cret");
            }

            // 4. Spans: the job's waits (children of the scheduled task's span) and the hold of the lock above, with
            // its token.
            List<SimpleSpan> spans = new ArrayList<>(tracer.getSpans());
            Set<String> spanIds = spans.stream().map(SimpleSpan::getSpanId).collect(Collectors.toSet());
            assertThat(spans)
                    .filteredOn(s -> s.getName().equals("interlock wait")
                            && "nightly".equals(s.getTags().get("interlock.name")))
                    .isNotEmpty()
                    .allSatisfy(s -> assertThat(spanIds).as("parent of %s", s).contains(s.getParentId()));
            assertThat(spans)
                    .filteredOn(s -> s.getName().equals("interlock hold")
                            && "it-endpoint".equals(s.getTags().get("interlock.name")))
                    .singleElement()
                    .satisfies(s -> assertThat(s.getTags())
                            .containsEntry("interlock.token", Long.toString(token))
                            .containsEntry("interlock.end", "released"));

            // 5. DOWN with the reason while the backend is gone, then UP again.
            server.stop();
            try {
                await().atMost(Timing.seconds(30))
                        .until(() -> get(port, "/actuator/health/interlock").statusCode() == 503);
                HttpResponse<String> down = get(port, "/actuator/health/interlock");
                assertThat(down.body())
                        .contains("\"DOWN\"")
                        .contains("\"reason\"")
                        .doesNotContain("s3cret");
            } finally {
                server.start();
            }
            await().atMost(Timing.seconds(30))
                    .until(() -> get(port, "/actuator/health/interlock").statusCode() == 200);
        } finally {
            other.destroy();
            if (!other.waitFor(20, TimeUnit.SECONDS)) {
                other.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** One logged lock attempt: {@code attempt TICK PID BEFORE AFTER granted|busy}. */
    record Attempt(long tick, long pid, long before, long after, boolean granted) {
        static Attempt parse(String line) {
            String[] f = line.split(" ");
            return new Attempt(
                    Long.parseLong(f[1]),
                    Long.parseLong(f[2]),
                    Long.parseLong(f[3]),
                    Long.parseLong(f[4]),
                    f[5].equals("granted"));
        }
    }

    private static List<Attempt> attempts(Path log) {
        return lines(log).stream()
                .filter(l -> l.startsWith("attempt "))
                .map(Attempt::parse)
                .toList();
    }

    /**
     * Attempts that were granted although another instance's grant surely held the lock then: they
     * began after that grant returned and ended before its try began + 500 ms (lockAtLeastFor).
     */
    private static List<String> violations(List<Attempt> attempts) {
        List<String> found = new ArrayList<>();
        for (Attempt granted : attempts) {
            for (Attempt a : attempts) {
                if (granted.granted()
                        && a.granted()
                        && a.pid() != granted.pid()
                        && a.before() >= granted.after()
                        && a.after() < granted.before() + 500) {
                    found.add(a + " within the hold of " + granted);
                }
            }
        }
        return found;
    }

    /** The ticks at which both instances attempted the lock and exactly one got it. */
    private static long ticksWithOneGrant(List<Attempt> attempts, long a, long b) {
        Map<Long, List<Attempt>> byTick = attempts.stream().collect(Collectors.groupingBy(Attempt::tick));
        return byTick.values().stream()
                .filter(t ->
                        t.stream().map(Attempt::pid).collect(Collectors.toSet()).containsAll(List.of(a, b))
                                && t.stream().filter(Attempt::granted).count() == 1)
                .count();
    }

    private static List<String> lines(Path log) {
        try {
            return Files.exists(log)
                    ? Files.readAllLines(log).stream().filter(l -> !l.isBlank()).toList()
                    : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(20))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
