package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * For a lease backend's semaphores: a permit holder in another JVM killed (kill -9) or stopped
 * (SIGSTOP): its permit comes back after one lease, and is never handed out twice while that
 * lease lasts (the holder keeps one of two permits, the test the other: any grant before then
 * would be a third). A session backend ({@code zk:}) runs it with a session of {@value #LEASE_MS}
 * ms in {@link #uri()}: its session is the lease.
 */
public abstract class PermitHolderFaultContract {
    protected static final long LEASE_MS = 3000;

    /** The URI of a fresh namespace on the backend under test, the same for every call in one test. */
    protected abstract String uri();

    private String uri;
    private LockSpace locks;
    private Process child;

    @BeforeEach
    void open() {
        uri = uri();
        locks = Interlock.open(uri);
    }

    @AfterEach
    void close() {
        if (child != null) {
            child.destroyForcibly(); // this test's own child, by its handle
        }
        locks.close();
    }

    private BufferedReader startHolder() throws Exception {
        child = ChildJvm.builder(PermitHolder.class, List.of(), uri, "gpu", "2", Long.toString(LEASE_MS))
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        assertThat(line).as("the holder's first line").startsWith("HELD ");
        return out;
    }

    @Test
    public void aKilledHoldersPermit_comesBackAfterItsLease_notBefore() throws Exception {
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
    public void aStoppedHoldersPermit_isNotHandedOutWhileItsLeaseLasts_andTheHolderIsToldOnWaking() throws Exception {
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
     * Tries for the second permit until it comes back: it must not within the lease's first half
     * (measured from before the holder stopped renewing, so that is on the safe side), and must
     * within a few leases.
     */
    private Lease awaitFreedPermit(long since) {
        Lease[] got = new Lease[1];
        await().atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
            Optional<Lease> l = locks.lock("gpu").limit(2).tryAcquire();
            if (l.isPresent()) {
                got[0] = l.get();
            }
            return l.isPresent();
        });
        long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
        // The holder renewed at most a third of a lease before it stopped: the permit stays taken
        // at least two thirds of a lease after that.
        assertThat(waitedMs).as("ms until the permit came back").isGreaterThanOrEqualTo(LEASE_MS * 2 / 3 - 50);
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
