package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.mem.MemoryBackend;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The j.u.c. Lock view: reentrant per thread and per view, owner-checked unlock, lease visible. */
class LockViewTest {
    final String ns = UUID.randomUUID().toString();
    final LockSpace locks = Interlock.open("mem:" + ns);

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void theOwningThread_reenters_andTheLockIsReleasedWhenTheCountComesBackToZero() {
        LockView lock = locks.asLock("job");
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.getHoldCount()).isEqualTo(2);
        assertThat(locks.status("job").holders()).hasSize(1);
        lock.unlock();
        assertThat(locks.status("job").isFree()).as("one hold left").isFalse();
        assertThat(lock.lease().orElseThrow().isValid()).isTrue();
        lock.unlock();
        assertThat(locks.status("job").isFree()).isTrue();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void anotherThread_cannotUnlock_andWaitsToLock() throws Exception {
        LockView lock = locks.asLock("job");
        lock.lock();
        CompletableFuture<Throwable> unlock = CompletableFuture.supplyAsync(() -> {
            try {
                lock.unlock();
                return null;
            } catch (IllegalMonitorStateException e) {
                return e;
            }
        });
        assertThat(unlock.get(10, TimeUnit.SECONDS))
                .isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining("'job' is not held by this thread");
        assertThat(CompletableFuture.supplyAsync(lock::tryLock).get(10, TimeUnit.SECONDS))
                .isFalse();
        CountDownLatch got = new CountDownLatch(1);
        Thread other = new Thread(() -> {
            lock.lock();
            got.countDown();
            lock.unlock();
        });
        other.start();
        assertThat(got.await(200, TimeUnit.MILLISECONDS)).as("still held here").isFalse();
        lock.unlock();
        assertThat(got.await(10, TimeUnit.SECONDS)).isTrue();
        other.join(10_000);
    }

    @Test
    void lock_isUninterruptible_lockInterruptibly_isNot_andConditionsAreRefused() throws Exception {
        LockView lock = locks.asLock("job");
        LockView second = locks.asLock("job");
        lock.lock();
        AtomicBoolean interruptedSeen = new AtomicBoolean();
        Thread t = new Thread(() -> {
            Thread.currentThread().interrupt();
            try {
                second.lockInterruptibly();
            } catch (InterruptedException e) {
                interruptedSeen.set(true);
            }
        });
        t.start();
        t.join(10_000);
        assertThat(interruptedSeen).isTrue();
        assertThat(second.tryLock(50, TimeUnit.MILLISECONDS))
                .as("two views of one name exclude each other")
                .isFalse();
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class);
        lock.unlock();
        assertThat(second.tryLock(5, TimeUnit.SECONDS)).isTrue();
        second.unlock();
    }

    @Test
    void aLostLease_isVisibleThroughTheView_andUnlockDoesNotThrow() {
        LockView lock = locks.asLock("job");
        lock.lock();
        Lease l = lock.lease().orElseThrow();
        MemoryBackend.of(ns).orElseThrow().reportLoss("job", l.owner().id(), "test");
        assertThat(l.isValid()).as("a pushed loss marks the lease lost at once").isFalse();
        lock.unlock();
        assertThat(locks.tryAcquire("job")).isPresent();
    }

    @Test
    void isLocked_seesAHoldOfAnyThread_notOnlyTheCallers() throws Exception {
        LockView lock = locks.asLock("job");
        assertThat(lock.isLocked()).isFalse();
        lock.lock();
        assertThat(CompletableFuture.supplyAsync(lock::isLocked).get(10, TimeUnit.SECONDS))
                .as("seen from another thread")
                .isTrue();
        assertThat(CompletableFuture.supplyAsync(lock::isHeldByCurrentThread).get(10, TimeUnit.SECONDS))
                .isFalse();
        lock.unlock();
        assertThat(lock.isLocked()).isFalse();
    }

    @Test
    void options_setTheLeaseOfTheAcquisition_andAReentryIgnoresThem() throws Exception {
        AtomicLong now = new AtomicLong();
        String ns2 = UUID.randomUUID().toString();
        try (LockSpace timed = Interlock.builder("mem:" + ns2).ticker(now::get).open()) {
            LockView lock = timed.asLock("job");
            CountDownLatch lost = new CountDownLatch(1);
            assertThat(lock.tryLock(
                            Duration.ZERO, r -> r.lease(Duration.ofSeconds(2)).fixedLease()))
                    .isTrue();
            Lease lease = lock.lease().orElseThrow();
            lock.lock(r -> r.lease(Duration.ofHours(1)));
            assertThat(lock.getHoldCount()).isEqualTo(2);
            assertThat(lock.lease()).as("a reentry makes no acquisition").contains(lease);
            now.addAndGet(Duration.ofMillis(1500).toNanos());
            assertThat(lease.isValid()).isTrue();
            now.addAndGet(Duration.ofMillis(100).toNanos());
            assertThat(lease.isValid())
                    .as("the 2s fixed lease of the options reached its loss point")
                    .isFalse();
            lock.unlock();
            lock.unlock();
            lock.lockInterruptibly(r -> r.onLost(e -> lost.countDown()).mode(Mode.SHARED));
            assertThat(lock.lease().orElseThrow().mode())
                    .as("the view's mode wins over the options'")
                    .isEqualTo(Mode.EXCLUSIVE);
            MemoryBackend.of(ns2)
                    .orElseThrow()
                    .reportLoss("job", lock.lease().orElseThrow().owner().id(), "test");
            lock.unlock();
            assertThat(lost.await(10, TimeUnit.SECONDS))
                    .as("the listener of the options was told")
                    .isTrue();
        } finally {
            MemoryBackend.forget(ns2);
        }
    }

    @Test
    void aReentry_afterTheLossPoint_fails_andDropsTheHolding_soThatTheNextLockAcquiresAnew() throws Exception {
        AtomicLong now = new AtomicLong();
        String ns2 = UUID.randomUUID().toString();
        try (LockSpace timed = Interlock.builder("mem:" + ns2).ticker(now::get).open()) {
            LockView lock = timed.asLock("leader");
            assertThat(lock.tryLock(Duration.ZERO, r -> r.lease(Duration.ofSeconds(10))))
                    .isTrue();
            long token = lock.lease().orElseThrow().token();
            now.addAndGet(Duration.ofSeconds(5).toNanos());
            assertThat(lock.tryLock()).as("a heartbeat within the lease").isTrue();
            lock.unlock();
            now.addAndGet(Duration.ofSeconds(10).toNanos()); // stopped past the lease: no renewal ran
            assertThat(lock.tryLock()).as("a heartbeat after the loss point").isFalse();
            assertThat(lock.isHeldByCurrentThread()).isFalse();
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(lock.tryLock()).as("a new acquisition").isTrue();
            assertThat(lock.lease().orElseThrow().token()).isGreaterThan(token);
            now.addAndGet(Duration.ofSeconds(25).toNanos()); // past the loss point of the default 30s lease
            assertThatThrownBy(lock::lock)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("no longer valid");
            assertThat(lock.isLocked()).isFalse();
        } finally {
            MemoryBackend.forget(ns2);
        }
    }

    @Test
    void lockInterruptibly_withTheInterruptFlagSet_throwsEvenIfTheLockIsFree() {
        LockView lock = locks.asLock("job");
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(lock.isLocked()).isFalse();
        assertThat(locks.status("job").isFree()).isTrue();
        Thread.currentThread().interrupt();
        lock.lock(); // uninterruptible: acquires, and keeps the flag
        assertThat(Thread.interrupted()).isTrue();
        lock.unlock();
    }
}
