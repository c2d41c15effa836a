package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.Timing;
import dev.interlock.testservers.PostgresServer;
import dev.interlock.testservers.RedisTestServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 25: {@code interlock run -w 60s} waiting for a lock while its server is paused (SIGSTOP)
 * for 10 s runs its command once the server is back, on {@code redis:} and {@code jdbc:}
 * (PostgreSQL). Two runs wait through the same pause: one for a lock whose holder releases it
 * after the resume, one for a lock whose holder's lease runs out on the server during the pause
 * (the server's clock goes on while it is stopped). The 10 s are the fault itself, timed on the
 * clock while the test checks that neither command has run.
 */
class RunThroughServerPauseIT {
    private static final Duration PAUSE = Duration.ofSeconds(10);

    private final List<CliProcess> clis = new ArrayList<>();
    private final List<AutoCloseable> open = new ArrayList<>();
    private List<Long> stopped = List.of();

    @AfterEach
    void tearDown() throws Exception {
        signal("-CONT", stopped);
        clis.forEach(CliProcess::close);
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    @Test
    void redis_waitingRunsRideOutA10sPause_andRunOnceTheServerIsBack() throws Exception {
        RedisTestServer redis = RedisTestServer.privateServer();
        open.add(0, redis);
        String backend = redis.uri(RedisTestServer.newPrefix(), "");
        ridesOutAPause(backend, () -> serverProcesses("redis-server", redis.port()));
    }

    @Test
    void postgres_waitingRunsRideOutA10sPause_andRunOnceTheServerIsBack() throws Exception {
        PostgresServer pg = PostgresServer.start(Map.of());
        open.add(0, pg);
        ridesOutAPause(pg.url() + "&create=true", () -> serverProcesses("postgres", pg.port()));
    }

    private void ridesOutAPause(String backend, ServerPids server) throws Exception {
        LockSpace holders = Interlock.open(backend);
        open.add(0, holders);
        Lease releasedLater = holders.lock("released")
                .lease(Duration.ofSeconds(30))
                .tryAcquire()
                .orElseThrow();
        holders.lock("runsOut").lease(Duration.ofSeconds(3)).tryAcquire().orElseThrow();
        CliProcess afterRelease = waitingRun(backend, "released");
        CliProcess afterExpiry = waitingRun(backend, "runsOut");
        await().atMost(Timing.seconds(20))
                .until(() -> afterRelease.err().contains("interlock: waiting for")
                        && afterExpiry.err().contains("interlock: waiting for"));

        stopped = server.pids();
        signal("-STOP", stopped);
        long pausedAt = System.nanoTime();
        // The bound only catches a hung test: the pause ends as soon as PAUSE has passed.
        await().pollDelay(Duration.ZERO).atMost(PAUSE.plus(Timing.seconds(30))).until(() -> {
            assertThat(afterRelease.process.isAlive())
                    .as("waits through the pause: %s", afterRelease.err())
                    .isTrue();
            assertThat(afterRelease.out()).as("not run during the pause").isEmpty();
            assertThat(afterExpiry.process.isAlive())
                    .as("waits through the pause: %s", afterExpiry.err())
                    .isTrue();
            assertThat(afterExpiry.out()).as("not run during the pause").isEmpty();
            return System.nanoTime() - pausedAt >= PAUSE.toNanos();
        });
        signal("-CONT", stopped);
        stopped = List.of();

        assertRan(afterExpiry, "the lease ran out during the pause");
        releasedLater.close();
        assertRan(afterRelease, "released after the resume");
    }

    private CliProcess waitingRun(String backend, String name) throws Exception {
        CliProcess p =
                CliProcess.start("run", "-w", "60s", "--backend", backend, name, "--", "sh", "-c", "echo ran " + name);
        clis.add(p);
        return p;
    }

    private static void assertRan(CliProcess run, String why) throws InterruptedException {
        assertThat(run.exitCode(Timing.seconds(10))).as(why + ": " + run.err()).isZero();
        assertThat(run.out()).as(why).contains("ran");
        assertThat(run.err()).as(why).doesNotContain("lost").doesNotContain("Exception");
    }

    @FunctionalInterface
    private interface ServerPids {
        List<Long> pids();
    }

    /**
     * The server's processes: the one whose executable is named {@code executable} and whose
     * command line names {@code port} (Redis shows {@code 127.0.0.1:PORT}, the postmaster
     * {@code -p PORT}), and everything it started (PostgreSQL's backends and workers).
     */
    private static List<Long> serverProcesses(String executable, int port) {
        Pattern portWord = Pattern.compile("(^|\\D)" + port + "(\\D|$)");
        List<ProcessHandle> servers = ProcessHandle.allProcesses()
                .filter(p -> p.info().command().orElse("").matches(".*/" + executable + "[^/]*"))
                .filter(p -> portWord.matcher(commandLine(p)).find())
                .collect(Collectors.toList());
        assertThat(servers).as("the server on port %d", port).isNotEmpty();
        List<Long> pids = new ArrayList<>();
        for (ProcessHandle s : servers) {
            pids.add(s.pid());
            s.descendants().forEach(d -> pids.add(d.pid()));
        }
        return pids;
    }

    /**
     * The process's command line as it shows it now, from /proc: Redis rewrites its arguments
     * into a title ({@code redis-server 127.0.0.1:PORT}), which {@link ProcessHandle.Info} does
     * not show reliably.
     */
    private static String commandLine(ProcessHandle p) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(p.pid()), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException e) {
            return ""; // gone, or not ours to read
        }
    }

    /** Stops or continues the server this test started, by its pids (never by name). */
    private static void signal(String sig, List<Long> pids) throws Exception {
        if (pids.isEmpty()) {
            return;
        }
        List<String> cmd = new ArrayList<>(List.of("kill", sig));
        pids.forEach(p -> cmd.add(Long.toString(p)));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    }
}
