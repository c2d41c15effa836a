package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease under the registry's locks (time to live, renewal, loss), on {@code mem:} with an
 * injected ticker and a manual scheduler: time passes only when the test says so.
 */
class RegistryLeaseTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final String ns = UUID.randomUUID().toString();
    LockSpace space;
    MemoryBackend backend;
    InterlockLockRegistry registry;

    @BeforeEach
    void open() {
        space = Interlock.builder("mem:" + ns)
                .ticker(ticker)
                .scheduler(scheduler)
                .executor(scheduler)
                .defaultLease(Duration.ofSeconds(30))
                .open();
        backend = MemoryBackend.of(ns).orElseThrow();
        registry = new InterlockLockRegistry(space, ticker);
    }

    @AfterEach
    void close() {
        space.close();
        MemoryBackend.forget(ns);
    }

    private Lease lease(InterlockLock lock) {
        return lock.lease().orElseThrow();
    }

    @Test
    void aLockIsRenewedInTheBackground_whileHeld() {
        InterlockLock lock = registry.obtain("job");
        lock.lock(Duration.ofSeconds(10));
        for (int i = 0; i < 12; i++) {
            scheduler.advance(Duration.ofSeconds(5));
        }
        assertThat(lease(lock).isValid()).isTrue();
        assertThat(backend.calls().renewals())
                .as("renewed about every third of the 10s time to live")
                .isGreaterThanOrEqualTo(15);
        lock.unlock();
        assertThat(space.status("job").isFree()).isTrue();
    }

    @Test
    void withoutBackgroundRenewal_theTimeToLiveEndsTheLock_andUnlockSaysSo() throws Exception {
        registry.setRenewInBackground(false);
        InterlockLock lock = registry.obtain("job");
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofSeconds(5))).isTrue();
        scheduler.advance(Duration.ofMillis(3900));
        assertThat(lease(lock).isValid()).isTrue();
        scheduler.advance(Duration.ofSeconds(2));
        assertThat(lease(lock).isValid())
                .as("5s time to live, unrenewed (declared lost a fifth before its end)")
                .isFalse();
        assertThat(backend.calls().renewals()).isZero();
        assertThat(space.tryAcquire("job"))
                .as("another holder gets it")
                .isPresent()
                .get()
                .satisfies(Lease::close);
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("lock 'job' in mem:" + ns + " was lost before unlock")
                .hasMessageContaining("fencing token 1");
        assertThat(lock.getHoldCount()).as("the hold is freed all the same").isZero();
    }

    @Test
    void theDefaultTimeToLive_appliesToLockWithoutOne() {
        registry.setRenewInBackground(false);
        registry.setDefaultTtl(Duration.ofSeconds(5));
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        scheduler.advance(Duration.ofSeconds(6));
        assertThat(lease(lock).isValid()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(() -> registry.setDefaultTtl(Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("default time to live must be positive");
    }

    // ---------------------------------------------------------------- reentry as a heartbeat
    // (LockRegistryLeaderInitiator)

    /**
     * Spring's leader initiator calls {@code tryLock()} again on the lock it holds as its
     * heartbeat and steps down when that fails. A leader stopped (SIGSTOP) past its loss point
     * must fail its next heartbeat, though no timer has run since, and nobody else may be leader
     * before the lease's end.
     */
    @Test
    void aHeartbeatReentry_afterAStopPastTheLossPoint_fails_andNobodyElseGetsTheLockBeforeTheEnd() throws Exception {
        InterlockLockRegistry otherNode = new InterlockLockRegistry(space, ticker);
        InterlockLock leader = registry.obtain("leader");
        assertThat(leader.tryLock(Duration.ZERO, Duration.ofSeconds(10))).isTrue();
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(leader.tryLock()).as("a heartbeat of a live leader").isTrue();
        leader.unlock();
        ticker.advance(Duration.ofMillis(
                7500)); // stopped until 12.5s: renewed last at 3.3s, its loss point is 11.3s, its end 13.3s
        assertThat(otherNode.obtain("leader").tryLock())
                .as("before the end of the stopped leader's lease")
                .isFalse();
        assertThat(leader.tryLock()).as("the stopped leader's first heartbeat").isFalse();
        assertThat(leader.isHeldByCurrentThread()).isFalse();
        assertThatThrownBy(leader::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(otherNode.obtain("leader").tryLock())
                .as("still before the end")
                .isFalse();
        scheduler.advance(Duration.ofMillis(900)); // the timer runs again: the loss, then the release at the end
        InterlockLock second = otherNode.obtain("leader");
        assertThat(second.tryLock())
                .as("the other node is elected after the end")
                .isTrue();
        assertThat(leader.tryLock()).as("the old leader stays out").isFalse();
        second.unlock();
    }

    @Test
    void aLockReentry_onALostLease_throws_andDropsTheHolding() {
        InterlockLock lock = registry.obtain("job");
        lock.lock(Duration.ofSeconds(10));
        lock.lock();
        ticker.advance(Duration.ofSeconds(9));
        assertThatThrownBy(lock::lock).isInstanceOf(LockLostException.class).hasMessageContaining("no longer valid");
        assertThat(lock.getHoldCount()).isZero();
    }

    @Test
    void withoutBackgroundRenewal_aHeartbeatReentryRenewsTheLease_asSpringsJdbcLockDoes() throws Exception {
        registry.setRenewInBackground(false);
        InterlockLock leader = registry.obtain("leader");
        assertThat(leader.tryLock(Duration.ZERO, Duration.ofSeconds(5))).isTrue();
        for (int i = 0; i < 20; i++) {
            scheduler.advance(Duration.ofSeconds(2));
            assertThat(leader.tryLock(0, TimeUnit.MILLISECONDS))
                    .as("heartbeat %d", i)
                    .isTrue();
            leader.unlock();
        }
        assertThat(lease(leader).isValid()).isTrue();
        assertThat(backend.calls().renewals()).isEqualTo(20);
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(leader.tryLock()).as("no heartbeat for a whole time to live").isFalse();
    }

    @Test
    void interruptibleCalls_withTheInterruptFlagSet_throw_evenOnAFreeOrHeldLock() throws Exception {
        InterlockLock lock = registry.obtain("job");
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
        assertThat(space.status("job").isFree()).as("nothing acquired").isTrue();
        lock.lock();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(lock.getHoldCount()).isEqualTo(1);
        lock.unlock();
    }

    /**
     * The registry adds no clock reading to a lock + unlock (nor to obtain): idle time is counted
     * by the expiry sweeps, not stamped on every use. A reading costs about 25 ns, 5% of a whole
     * acquisition on {@code mem:}.
     */
    @Test
    void lockAndUnlock_andObtain_readNoClockOfTheRegistry() {
        AtomicInteger reads = new AtomicInteger();
        InterlockLockRegistry counted = new InterlockLockRegistry(space, () -> {
            reads.incrementAndGet();
            return ticker.read();
        });
        InterlockLock lock = counted.obtain("job");
        int afterCreation = reads.get();
        for (int i = 0; i < 100; i++) {
            counted.obtain("job").lock();
            lock.unlock();
            assertThat(lock.tryLock()).isTrue();
            lock.unlock();
        }
        assertThat(reads.get()).isEqualTo(afterCreation);
        counted.expireUnusedOlderThan(1000);
        assertThat(reads.get()).as("one reading per sweep").isEqualTo(afterCreation + 1);
    }

    /**
     * Idle time runs from the sweep that first saw the last use: never shorter than the real idle
     * time, at most one sweep interval longer.
     */
    @Test
    void expiry_countsIdleTimeFromTheSweepThatSawTheLastUse() {
        InterlockLock lock = registry.obtain("a");
        ticker.advance(Duration.ofMillis(500));
        lock.lock();
        lock.unlock();
        ticker.advance(Duration.ofMillis(700));
        registry.expireUnusedOlderThan(1000); // at 1.2s: used since the last sweep (0.7s ago)
        assertThat(registry.size()).isEqualTo(1);
        ticker.advance(Duration.ofMillis(400));
        registry.expireUnusedOlderThan(1000); // at 1.6s: idle 1.1s, but only 0.4s since the sweep that saw the use
        assertThat(registry.size()).isEqualTo(1);
        ticker.advance(Duration.ofMillis(700));
        registry.expireUnusedOlderThan(1000); // at 2.3s: 1.1s since that sweep
        assertThat(registry.size()).isZero();
    }

    @Test
    void expiry_isMeasuredOnTheGivenTicker() {
        registry.obtain("a");
        ticker.advance(Duration.ofMillis(999));
        registry.expireUnusedOlderThan(1000);
        assertThat(registry.size()).isEqualTo(1);
        ticker.advance(Duration.ofMillis(2));
        registry.expireUnusedOlderThan(1000);
        assertThat(registry.size()).isZero();
    }
}
