package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.KernelWait;
import dev.interlock.testkit.Timing;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code flock:} waiters on platform threads sleep in flock(2) ({@link KernelWait}): the one
 * holding the gate on the lock file, the next on the gate; releases pass the lock along in that
 * order, and closing a space ends a sleeping wait at once.
 */
class FlockKernelWaitTest {
    @TempDir
    Path dir;

    @BeforeEach
    void usable() {
        assumeTrue(KernelWait.usable(), "kernel waits are not usable here");
    }

    /** A thread acquiring "w" in {@code space}; completes with the lease or the exception. */
    private static CompletableFuture<Object> waiter(LockSpace space, String name) {
        return waiter(() -> space.acquire("w", Timing.seconds(60)), name);
    }

    /** A thread named {@code name} running {@code acquire}; completes with the lease or the exception. */
    private static CompletableFuture<Object> waiter(Callable<Lease> acquire, String name) {
        CompletableFuture<Object> f = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try {
                        f.complete(acquire.call());
                    } catch (Throwable e) {
                        f.complete(e);
                    }
                },
                name);
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static Thread thread(String name) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals(name))
                .findFirst()
                .orElse(null);
    }

    private static boolean asleepInFlock(String name) {
        Thread t = thread(name);
        return t != null
                && Arrays.stream(t.getStackTrace())
                        .limit(12)
                        .anyMatch(e -> e.getClassName().endsWith(".KernelWait")
                                && e.getMethodName().equals("flock"));
    }

    @Test
    void waitersSleepInFlock_andEachReleaseHandsTheLockOn() throws Exception {
        try (LockSpace holder = Interlock.open("flock:" + dir);
                LockSpace a = Interlock.open("flock:" + dir);
                LockSpace b = Interlock.open("flock:" + dir)) {
            Lease held = holder.tryAcquire("w").orElseThrow();
            CompletableFuture<Object> first = waiter(a, "first-waiter");
            await().atMost(Timing.seconds(10)).until(() -> asleepInFlock("first-waiter"));
            CompletableFuture<Object> second = waiter(b, "second-waiter");
            await().atMost(Timing.seconds(10)).until(() -> asleepInFlock("second-waiter"));

            held.close();
            Object got = first.get(10, TimeUnit.SECONDS);
            assertThat(got).as("the waiter that held the gate").isInstanceOf(Lease.class);
            assertThat(second).isNotDone();
            await().atMost(Timing.seconds(10)).until(() -> asleepInFlock("second-waiter"));
            ((Lease) got).close();
            Object next = second.get(10, TimeUnit.SECONDS);
            assertThat(next).isInstanceOf(Lease.class);
            ((Lease) next).close();
        }
    }

    /**
     * A permit of 1 has one slot to wait for: its waiter with the gate sleeps in flock(2) on the
     * slot file, and the holder's release hands the slot over inside the kernel, as for a lock.
     */
    @Test
    void aPermitOfOne_waitsInFlockOnItsSlot_andTheReleaseHandsItOn() throws Exception {
        try (LockSpace holder = Interlock.open("flock:" + dir);
                LockSpace a = Interlock.open("flock:" + dir)) {
            Lease held = holder.lock("one").limit(1).tryAcquire().orElseThrow();
            CompletableFuture<Object> w =
                    waiter(() -> a.lock("one").limit(1).acquire(Timing.seconds(60)), "permit-waiter");
            await().atMost(Timing.seconds(10)).until(() -> asleepInFlock("permit-waiter"));
            held.close();
            Object got = w.get(10, TimeUnit.SECONDS);
            assertThat(got).isInstanceOf(Lease.class);
            Lease permit = (Lease) got;
            assertThat(permit.token()).isGreaterThan(held.token());
            assertThat(holder.lock("one").limit(1).tryAcquire()).isEmpty();
            permit.close();
            holder.lock("one").limit(1).tryAcquire().orElseThrow().close();
        }
    }

    @Test
    void closingTheSpace_endsAWaitAsleepInFlock_atOnce() throws Exception {
        try (LockSpace holder = Interlock.open("flock:" + dir);
                Lease held = holder.tryAcquire("w").orElseThrow()) {
            LockSpace waiting = Interlock.open("flock:" + dir);
            CompletableFuture<Object> w = waiter(waiting, "closed-waiter");
            await().atMost(Timing.seconds(10)).until(() -> asleepInFlock("closed-waiter"));
            long start = System.nanoTime();
            waiting.close();
            Object result = w.get(10, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("the wait ended after the close in")
                    .isLessThan(Timing.seconds(1));
            assertThat(result).isInstanceOf(IllegalStateException.class);
        }
    }
}
