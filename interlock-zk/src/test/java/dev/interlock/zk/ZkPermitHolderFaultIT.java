package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.PermitHolder;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A permit holder JVM killed (kill -9) or stopped (SIGSTOP) on {@code zk:}: its permit comes back
 * when the servers expire its session (a session of 3 s here, on a server ticking every 250 ms),
 * never sooner, and meanwhile nobody gets a permit beyond N; the stopped holder, continued, is told
 * it lost its permit.
 */
class ZkPermitHolderFaultIT {
    private static final long SESSION_MS = 3000;
    private static TestingServer server;

    private String uri;
    private LockSpace locks;
    private Process child;

    @BeforeAll
    static void startServer() throws Exception {
        server = TestZk.startFastTicking();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @AfterEach
    void close() {
        if (child != null) {
            child.destroyForcibly(); // this test's own child, by its handle
        }
        if (locks != null) {
            locks.close();
        }
    }

    private BufferedReader startHolder() throws Exception {
        uri = "zk://" + server.getConnectString() + TestZk.newPath() + "?session=" + SESSION_MS + "ms";
        locks = Interlock.open(uri.replace("session=" + SESSION_MS + "ms", "session=5s"));
        child = ChildJvm.builder(PermitHolder.class, List.of(), uri, "gpu", "2", "1000")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line).as("the holder's first line").startsWith("HELD ");
        return out;
    }

    @Test
    void aKilledHoldersPermit_comesBackWithItsSession_notBefore_andNeverBeyondN() throws Exception {
        startHolder();
        try (Lease mine = locks.lock("gpu").limit(2).tryAcquire().orElseThrow()) {
            long killed = System.nanoTime();
            child.destroyForcibly(); // SIGKILL
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();
            Lease back = awaitFreedPermit(killed);
            assertThat(back.token()).isGreaterThan(mine.token());
            back.close();
        }
    }

    @Test
    void aStoppedHoldersPermit_isNotHandedOutWhileItsSessionLives_andTheHolderIsToldOnWaking() throws Exception {
        BufferedReader out = startHolder();
        try (Lease mine = locks.lock("gpu").limit(2).tryAcquire().orElseThrow()) {
            long stopped = System.nanoTime();
            signal("-STOP", child.pid());
            Lease back = awaitFreedPermit(stopped);
            signal("-CONT", child.pid());
            assertThat(out.readLine()).as("the woken holder is told").isEqualTo("LOST");
            back.close();
        }
    }

    /**
     * Tries for the second permit until it comes back; every failed try is a proof that nobody got
     * a third permit meanwhile. It must not come back within two thirds of the session timeout
     * (the servers heard from the holder at most a fifteenth of it before it stopped), and must
     * within a few; once back, the semaphore is full again.
     */
    private Lease awaitFreedPermit(long since) {
        Lease[] got = new Lease[1];
        await().atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Optional<Lease> l = locks.lock("gpu").limit(2).tryAcquire();
            l.ifPresent(lease -> got[0] = lease);
            return l.isPresent();
        });
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
        assertThat(waitedMs).as("ms until the permit came back").isGreaterThanOrEqualTo(SESSION_MS * 2 / 3);
        assertThat(locks.lock("gpu").limit(2).tryAcquire()).as("a third permit").isEmpty();
        assertThat(locks.status("gpu").holders()).hasSize(2);
        return got[0];
    }

    private static void signal(String sig, long pid) throws Exception {
        Process p =
                new ProcessBuilder("kill", sig, Long.toString(pid)).inheritIO().start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }
}
