package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.LockSpace;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.Timing;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a Spring user of {@link InterlockLockRegistry} relies on, run on every backend of the build:
 * one lock object per key, reentrant per thread, owner-checked unlock, timed tryLock, the lease
 * and its fencing token reachable, and expiry of idle lock objects.
 */
abstract class RegistryContract {
    protected LockSpace space;
    protected final FakeTicker idle = new FakeTicker();
    protected InterlockLockRegistry registry;
    protected final ExecutorService pool = Executors.newCachedThreadPool();

    protected abstract LockSpace openSpace();

    @BeforeEach
    void openRegistry() {
        space = openSpace();
        registry = new InterlockLockRegistry(space, idle);
    }

    @AfterEach
    void closeRegistry() {
        pool.shutdownNow();
        space.close();
    }

    private <T> T inOtherThread(java.util.concurrent.Callable<T> task) throws Exception {
        return pool.submit(task).get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void obtain_givesOneObjectPerKey_andTakesOnlyStrings() {
        assertThat(registry.obtain("job")).isSameAs(registry.obtain("job"));
        assertThat(registry.obtain("job")).isNotSameAs(registry.obtain("job2"));
        assertThatThrownBy(() -> registry.obtain(UUID.randomUUID()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("pass a String, not a java.util.UUID");
        assertThatThrownBy(() -> registry.obtain(null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not null");
        assertThat(space.status("job").isFree()).as("obtain acquires nothing").isTrue();
    }

    @Test
    void theOwningThread_reenters_andTheLastUnlockReleases() throws Exception {
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(1, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.getHoldCount()).isEqualTo(3);
        long token = lock.lease().orElseThrow().token();
        lock.unlock();
        lock.unlock();
        assertThat(space.status("job").isFree()).as("one hold left").isFalse();
        assertThat(lock.lease().orElseThrow().token())
                .as("reentry makes no acquisition")
                .isEqualTo(token);
        lock.unlock();
        assertThat(space.status("job").isFree()).isTrue();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(lock.lease()).isEmpty();
    }

    @Test
    void anotherThread_cannotUnlock_norEnter() throws Exception {
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        Throwable e = inOtherThread(() -> {
            try {
                registry.obtain("job").unlock();
                return null;
            } catch (IllegalMonitorStateException x) {
                return x;
            }
        });
        assertThat(e)
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'job' is not held by this thread");
        assertThat(inOtherThread(() -> registry.obtain("job").tryLock())).isFalse();
        assertThat(lock.isLocked()).isTrue();
        lock.unlock();
        assertThatThrownBy(lock::unlock).as("unlock of a free lock").isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void tryLockWithTimeout_getsTheLockWhenTheHolderReleases_andGivesUpOtherwise() throws Exception {
        InterlockLock lock = registry.obtain("job");
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<?> holder = pool.submit(() -> {
            lock.lock();
            held.countDown();
            release.await();
            lock.unlock();
            return null;
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS))
                .as("busy for the whole wait")
                .isFalse();
        assertThat(lock.getHoldCount()).isZero();
        Future<Boolean> waiter = pool.submit(() -> {
            boolean got = lock.tryLock(Timing.seconds(30), Duration.ofSeconds(20));
            if (got) {
                lock.unlock();
            }
            return got;
        });
        release.countDown();
        holder.get(10, TimeUnit.SECONDS);
        assertThat(waiter.get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
    }

    @Test
    void tokens_increase_withEveryAcquisition() {
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        long first = lock.lease().orElseThrow().token();
        lock.unlock();
        lock.lock(Duration.ofSeconds(20));
        assertThat(lock.lease().orElseThrow().token()).isGreaterThan(first);
        lock.unlock();
    }

    @Test
    void executeLocked_runsUnderTheLock_andReleases() throws Exception {
        String seen = registry.executeLocked("job", () -> space.status("job").isFree() ? "free" : "held");
        assertThat(seen).isEqualTo("held");
        assertThat(space.status("job").isFree()).isTrue();
        InterlockLock lock = registry.obtain("job");
        CompletableFuture<Void> holding = new CompletableFuture<>();
        CountDownLatch held = new CountDownLatch(1);
        pool.submit(() -> {
            lock.lock();
            held.countDown();
            holding.get();
            lock.unlock();
            return null;
        });
        assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> registry.executeLocked("job", Duration.ofMillis(50), () -> {}))
                .isInstanceOf(TimeoutException.class);
        holding.complete(null);
    }

    @Test
    void expireUnused_forgetsIdleLocksOnly_andAForgottenObjectStaysSafe() throws Exception {
        InterlockLock idleLock = registry.obtain("idle");
        InterlockLock held = registry.obtain("held");
        held.lock();
        idle.advance(Duration.ofSeconds(5));
        InterlockLock recent = registry.obtain("recent");
        registry.expireUnusedOlderThan(1000);
        assertThat(registry.size()).as("held and recent kept").isEqualTo(2);
        assertThat(registry.obtain("held")).isSameAs(held);
        assertThat(registry.obtain("recent")).isSameAs(recent);
        assertThat(registry.obtain("idle")).as("a new object after expiry").isNotSameAs(idleLock);

        // The forgotten object acts through the current one: no self-deadlock, no second holder in this JVM.
        idleLock.lock();
        InterlockLock current = registry.obtain("idle");
        assertThat(current.isHeldByCurrentThread()).isTrue();
        assertThat(current.tryLock()).as("a reentry, not a second acquisition").isTrue();
        assertThat(current.getHoldCount()).isEqualTo(2);
        assertThat(inOtherThread(() -> registry.obtain("idle").tryLock())).isFalse();
        current.unlock();
        idleLock.unlock();
        assertThat(space.status("idle").isFree()).isTrue();
        held.unlock();
    }

    @Test
    void renewLock_needsTheCallingThreadToHoldTheLock() throws Exception {
        assertThatThrownBy(() -> registry.renewLock("job"))
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("this thread does not hold it");
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        assertThat(inOtherThread(() -> {
                    try {
                        registry.renewLock("job");
                        return null;
                    } catch (IllegalMonitorStateException e) {
                        return e;
                    }
                }))
                .isInstanceOf(IllegalMonitorStateException.class);
        registry.renewLock("job");
        assertThat(lock.lease().orElseThrow().isValid()).isTrue();
        assertThatThrownBy(() -> registry.renewLock("job", Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("time to live must be positive");
        lock.unlock();
    }

    /**
     * A thread interrupted while holding (a cancelled task, a shutting-down executor) still unlocks
     * in its {@code finally}; {@code lock()} and {@code tryLock()} ignore the interrupt, as
     * {@link java.util.concurrent.locks.Lock} says, and leave it set.
     */
    @Test
    void anInterruptedThread_locksAndUnlocks_andKeepsItsInterrupt() throws Exception {
        InterlockLock lock = registry.obtain("job");
        boolean[] kept = new boolean[3];
        try {
            Thread.currentThread().interrupt();
            lock.lock();
            kept[0] = Thread.currentThread().isInterrupted();
            lock.unlock();
            kept[1] = Thread.currentThread().isInterrupted();
            assertThat(lock.tryLock())
                    .as("a free lock is taken by tryLock() whatever the interrupt")
                    .isTrue();
            lock.unlock();
            kept[2] = Thread.currentThread().isInterrupted();
        } finally {
            Thread.interrupted();
        }
        assertThat(kept).as("the interrupt after lock(), unlock(), tryLock()").containsOnly(true);
        assertThat(lock.isLocked()).isFalse();
        assertThat(space.status("job").isFree())
                .as("released by the interrupted thread")
                .isTrue();
        assertThat(inOtherThread(() -> {
                    boolean got = registry.obtain("job").tryLock();
                    registry.obtain("job").unlock();
                    return got;
                }))
                .isTrue();
    }

    /** {@link java.util.concurrent.locks.Lock#lockInterruptibly()}: an interrupted thread does not acquire, even a free lock. */
    @Test
    void anInterruptedThread_lockInterruptibly_throws_andExecuteLockedDoesNotRunTheTask() {
        InterlockLock lock = registry.obtain("job");
        boolean[] ran = {false};
        try {
            Thread.currentThread().interrupt();
            assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> registry.executeLocked("job", () -> ran[0] = true))
                    .isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
        assertThat(ran[0]).isFalse();
        assertThat(lock.isLocked()).isFalse();
        assertThat(space.status("job").isFree()).isTrue();
    }

    @Test
    void conditions_areRefusedWithAReason() {
        assertThatThrownBy(() -> registry.obtain("job").newCondition())
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("no conditions");
    }
}
