package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import dev.interlock.testservers.PostgresServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: 50 processes wait for one name on a server database and are served in the order they
 * lined up, with no connection error at PostgreSQL's default {@code max_connections} of 100; one of
 * them is killed in the line, and the others are still served, in order, once its place runs out.
 * Arrival order is made certain, without sleeping: the next process is let go only once the
 * previous one shows in the name's line ({@code status().queued()}).
 */
class WaitersInTurnIT {
    private static final int WAITERS = 50;
    private static final int STARTING = 4;
    /** The waiter killed while it stands in the line. */
    private static final int DIES = 10;

    @Test
    void postgres_fiftyWaitingProcesses_areServedInArrivalOrder_atTheDefaultMaxConnections(@TempDir Path work)
            throws Exception {
        PostgresServer server = null;
        String base = System.getenv("INTERLOCK_IT_POSTGRES_URL");
        if (base == null || base.isBlank()) {
            server = PostgresServer.start(Map.of("max_connections", "100"));
            base = server.url();
        }
        try {
            AtomicInteger peak = new AtomicInteger();
            long[] last = {0};
            try (Connection probe =
                    DriverManager.getConnection(JdbcUrls.split(base).driverUrl())) {
                servedInArrivalOrder(base, work, () -> {
                    if (System.nanoTime() - last[0] > TimeUnit.MILLISECONDS.toNanos(100)) {
                        last[0] = System.nanoTime();
                        peak.accumulateAndGet(clients(probe), Math::max);
                    }
                });
            }
            System.err.printf(
                    "PostgreSQL: at most %d client connections with %d processes waiting%n", peak.get(), WAITERS);
        } finally {
            if (server != null) {
                server.stop();
            }
        }
    }

    @Test
    void mariadb_fiftyWaitingProcesses_areServedInArrivalOrder(@TempDir Path work) throws Exception {
        servedInArrivalOrder(TestServers.mariadbUrl(), work, () -> {});
    }

    private static void servedInArrivalOrder(String base, Path work, Runnable sample) throws Exception {
        String uri = TestServers.withOptions(base, "table=" + TestServers.table() + "&create=true");
        Path grants = Files.createFile(work.resolve("grants"));
        List<Process> procs = new ArrayList<>();
        try (LockSpace locks = Interlock.open(uri)) {
            Lease first =
                    locks.lock("turn").lease(Duration.ofMinutes(2)).tryAcquire().orElseThrow();
            List<OutputStream> gos = new ArrayList<>();
            // A few JVMs start at a time: 50 at once on two cores take longer than their connect timeout.
            for (int i = 0; i < WAITERS + STARTING; i++) {
                if (i < WAITERS) {
                    Process p = ChildJvm.builder(
                                    InTurnWaiter.class,
                                    List.of("-Xmx48m"),
                                    uri,
                                    "turn",
                                    Integer.toString(i),
                                    grants.toString())
                            .redirectError(ProcessBuilder.Redirect.INHERIT)
                            .start();
                    procs.add(p);
                    gos.add(p.getOutputStream());
                }
                if (i >= STARTING) {
                    Process p = procs.get(i - STARTING);
                    BufferedReader out =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                    assertThat(out.readLine())
                            .as("a waiter opened the lock space")
                            .isEqualTo("ready");
                }
            }
            for (int i = 0; i < WAITERS; i++) {
                gos.get(i).write("go\n".getBytes(StandardCharsets.UTF_8));
                gos.get(i).flush();
                int inLine = i + 1;
                await().atMost(Timing.seconds(20))
                        .pollInterval(Duration.ofMillis(5))
                        .untilAsserted(() -> {
                            sample.run();
                            assertThat(locks.status("turn").queued())
                                    .as("waiters shown in the line")
                                    .hasSize(inLine);
                        });
            }
            // A waiter dies in the line: its place runs out (5 s at most) and the one behind it goes next.
            procs.get(DIES).destroyForcibly().waitFor();
            first.close();
            long deadline = System.nanoTime() + Timing.seconds(90).toNanos();
            for (int i = 0; i < WAITERS; i++) {
                Process p = procs.get(i);
                while (!p.waitFor(50, TimeUnit.MILLISECONDS)) {
                    sample.run();
                    assertThat(System.nanoTime())
                            .as("every waiter was served in time")
                            .isLessThan(deadline);
                }
                if (i != DIES) {
                    assertThat(p.exitValue())
                            .as("a waiter's exit status (1: its acquire failed, see its stderr)")
                            .isZero();
                }
            }
        } finally {
            procs.forEach(Process::destroyForcibly);
        }
        List<Integer> order =
                Files.readAllLines(grants).stream().map(Integer::parseInt).collect(Collectors.toList());
        assertThat(order)
                .as("grant order")
                .isEqualTo(IntStream.range(0, WAITERS)
                        .filter(i -> i != DIES)
                        .boxed()
                        .collect(Collectors.toList()));
    }

    /** Client connections to the server now, this probe's included. */
    private static int clients(Connection probe) {
        try (Statement st = probe.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")) {
            rs.next();
            return rs.getInt(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("counting connections failed: " + e.getMessage(), e);
        }
    }
}
