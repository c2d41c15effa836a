package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeClock;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The core's lease rules, on an injected ticker and a manual scheduler: no test here sleeps. */
class LeaseWatchdogTest {
    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler scheduler = new ManualScheduler(ticker);
    final FakeClock wall = FakeClock.at(Instant.parse("2026-11-21T03:00:00Z"));
    LockSpace locks;
    MemoryBackend backend;
    String ns;

    @BeforeEach
    void open() {
        ns = UUID.randomUUID().toString();
        locks = Interlock.builder("mem:" + ns)
                .ticker(ticker)
                .clock(wall)
                .scheduler(scheduler)
                .executor(scheduler)
                .defaultLease(Duration.ofSeconds(30))
                .open();
        backend = MemoryBackend.of(ns).orElseThrow();
    }

    @AfterEach
    void close() {
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void renewal_runsEveryThirdOfTheLease_andKeepsTheLockForever() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        for (int i = 0; i < 30; i++) {
            scheduler.advance(Duration.ofSeconds(10));
        }
        assertThat(backend.calls().renewals()).isEqualTo(30);
        assertThat(l.isValid()).isTrue();
        assertThat(locks.tryAcquire("job")).isEmpty();
    }

    @Test
    void renewalFailing_isToldBeforeTheLeaseRunsOut() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        long[] toldAt = {0};
        long start = ticker.read();
        l.onLost(e -> {
            told.add(e);
            toldAt[0] = ticker.read();
        });
        backend.cut();
        scheduler.advance(Duration.ofSeconds(29));
        assertThat(told).hasSize(1);
        assertThat(told.get(0))
                .hasMessageContaining("renewal kept failing")
                .hasCauseInstanceOf(dev.interlock.LockBackendException.class);
        Duration toldAfter = Duration.ofNanos(toldAt[0] - start);
        assertThat(toldAfter)
                .as("told before the 30s lease ran out, with margin")
                .isLessThanOrEqualTo(Duration.ofSeconds(24));
        assertThat(l.isValid()).isFalse();
        assertThat(backend.calls().renewals()).as("retried before giving up").isGreaterThanOrEqualTo(3);
    }

    @Test
    void renewalRecovering_keepsTheLease() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        backend.cut();
        scheduler.advance(Duration.ofSeconds(15));
        backend.restore();
        scheduler.advance(Duration.ofSeconds(60));
        assertThat(l.isValid()).isTrue();
    }

    @Test
    void lockTakenAway_isLostAtOnce() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        backend.takeAway("job", l.owner().id());
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class);
        assertThat(l.isValid()).as("invalid as soon as renew() throws").isFalse();
        scheduler.advance(Duration.ZERO); // listeners and the release after a loss run on the executor
        assertThat(told).hasSize(1);
        assertThat(l.isValid()).isFalse();
        List<LockLostException> late = new ArrayList<>();
        l.onLost(late::add);
        assertThat(late).as("a listener added after the loss runs at once").hasSize(1);
        l.close();
        assertThat(backend.calls().releases()).as("released once, when lost").isEqualTo(1);
    }

    @Test
    void fixedLease_isNotRenewed_andIsLostBeforeItsEnd() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        scheduler.advance(Duration.ofSeconds(7));
        assertThat(told).isEmpty();
        scheduler.advance(Duration.ofMillis(1500));
        assertThat(told).singleElement().satisfies(e -> assertThat(e).hasMessageContaining("fixed lease"));
        assertThat(backend.calls().renewals()).isZero();
    }

    @Test
    void isValid_endsAtTheLossPoint_evenIfTheWatchdogNeverRan() {
        Lease l = locks.lock("job").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
        ticker.advance(Duration.ofMillis(7999));
        assertThat(l.isValid()).isTrue();
        ticker.advance(Duration.ofMillis(1));
        assertThat(l.isValid())
                .as("a paused watchdog does not extend validity past the loss point (8s of 10s)")
                .isFalse();
    }

    // ---------------------------------------------------------------- the lease rule: lost at the loss point, kept
    // until the end

    @Test
    void fixedLease_lostAtItsLossPoint_isKeptFromOthersUntilItsEnd() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        scheduler.advance(Duration.ofSeconds(8));
        assertThat(told).as("told at the loss point").hasSize(1);
        assertThat(l.isValid()).isFalse();
        scheduler.advance(Duration.ofMillis(1999));
        assertThat(backend.calls().releases())
                .as("not released before the end of the lease")
                .isZero();
        assertThat(locks.tryAcquire("job"))
                .as("nobody else enters before lockAtMostFor")
                .isEmpty();
        scheduler.advance(Duration.ofMillis(1));
        assertThat(backend.calls().releases()).as("released at its end").isEqualTo(1);
        locks.tryAcquire("job").orElseThrow().close();
        l.close();
        assertThat(told).hasSize(1);
        assertThat(backend.calls().releases())
                .as("a late close releases nothing more")
                .isEqualTo(2);
    }

    @Test
    void lostAtTheLossPoint_thenClosedByTheHolder_isReleasedAtOnce() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        scheduler.advance(Duration.ofMillis(8500));
        assertThat(l.isValid()).isFalse();
        l.close(); // the holder has stopped: others need not wait for the end
        assertThat(backend.calls().releases()).isEqualTo(1);
        locks.tryAcquire("job").orElseThrow().close();
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(backend.calls().releases())
                .as("the release at the end does not run again")
                .isEqualTo(2);
    }

    @Test
    void lostAtTheLossPoint_closedBeforeItsHoldAtLeastTime_isKeptUntilThen() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .holdAtLeast(Duration.ofSeconds(9))
                .tryAcquire()
                .orElseThrow();
        scheduler.advance(Duration.ofMillis(8500));
        l.close();
        assertThat(locks.tryAcquire("job")).as("held at least 9s").isEmpty();
        scheduler.advance(Duration.ofMillis(500));
        locks.tryAcquire("job").orElseThrow().close();
    }

    @Test
    void pausedPastTheLossPoint_thenClosed_reportsTheLossOnce_beforeCloseReturns() {
        Lease l = locks.lock("job").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        ticker.advance(Duration.ofSeconds(15)); // the whole process was stopped: no timer ran
        l.close();
        assertThat(told)
                .as("lost before it was closed")
                .singleElement()
                .satisfies(e -> assertThat(e).hasMessageContaining("not renewed in time"));
        scheduler.advance(Duration.ofMinutes(1));
        l.close();
        assertThat(told).as("once").hasSize(1);
        locks.tryAcquire("job").orElseThrow().close();
    }

    /** Issue 25: a renewal queued when the paused process ran again never had the chance to answer; the pause is the cause. */
    @Test
    void pausedPastTheEnd_thenRunningAgain_isToldAsAPause_notAsARenewalThatDidNotAnswer() {
        Lease l = locks.lock("job").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        ticker.advance(Duration.ofSeconds(15)); // the whole process was stopped: no timer ran
        scheduler.advance(Duration.ZERO); // it runs again: a renewal and the loss check are both overdue
        assertThat(told)
                .singleElement()
                .satisfies(e -> assertThat(e)
                        .hasMessageContaining("was this process paused?")
                        .hasMessageContaining("ran out 5000ms ago")
                        .hasMessageNotContaining("did not answer"));
    }

    @Test
    void closedBeforeTheLossPoint_reportsNoLoss() {
        Lease l = locks.lock("job").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        ticker.advance(Duration.ofMillis(7999));
        l.close();
        scheduler.advance(Duration.ofMinutes(1));
        assertThat(told).isEmpty();
    }

    @Test
    void pausedPastTheLossPoint_thenRenewed_saysLost_andDoesNotRenew() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        List<LockLostException> told = new ArrayList<>();
        l.onLost(told::add);
        ticker.advance(Duration.ofSeconds(9));
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("fixed lease");
        assertThat(told).hasSize(1);
        assertThat(backend.calls().renewals()).isZero();
    }

    @Test
    void wallClockJumps_changeNothing() {
        Lease l = locks.lock("job")
                .lease(Duration.ofSeconds(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        wall.advance(Duration.ofHours(5));
        assertThat(l.isValid()).isTrue();
        wall.advance(Duration.ofHours(-10));
        assertThat(l.isValid()).isTrue();
        assertThat(l.validUntil()).isEqualTo(wall.instant().plusSeconds(10));
        ticker.advance(Duration.ofSeconds(11));
        assertThat(l.isValid()).isFalse();
    }

    @Test
    void close_releasesOnce_andStopsRenewal() {
        Lease l = locks.tryAcquire("job").orElseThrow();
        l.close();
        l.close();
        scheduler.advance(Duration.ofMinutes(5));
        assertThat(backend.calls().releases()).isEqualTo(1);
        assertThat(backend.calls().renewals()).isZero();
        assertThat(scheduler.pending()).isZero();
    }

    @Test
    void renewedLeaseShorterThan100ms_isRejected_sayingWhatWorks() {
        assertThatThrownBy(() -> locks.lock("job").lease(Duration.ofMillis(50)).tryAcquire())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 100ms")
                .hasMessageContaining("fixedLease()");
    }

    @Test
    void fixedLeaseShorterThan100ms_isHonoured() {
        Lease l = locks.lock("job")
                .lease(Duration.ofMillis(50))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        scheduler.advance(Duration.ofMillis(40));
        assertThat(l.isValid()).isFalse();
        assertThat(locks.tryAcquire("job")).isEmpty();
        scheduler.advance(Duration.ofMillis(10));
        locks.tryAcquire("job").orElseThrow().close();
        assertThatThrownBy(() -> locks.lock("job")
                        .lease(Duration.ofNanos(999_999))
                        .fixedLease()
                        .tryAcquire())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1ms, was 999µs");
    }

    @Test
    void acquire_withTheInterruptFlagSet_throwsEvenIfTheLockIsFree() {
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> locks.acquire("job", Duration.ofSeconds(1))).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted())
                .as("the flag is cleared, as java.util.concurrent does")
                .isFalse();
        assertThat(locks.status("job").isFree()).isTrue();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> locks.acquire("job")).isInstanceOf(InterruptedException.class);
        assertThat(locks.status("job").isFree()).isTrue();
    }

    @Test
    void builder_optionSetTwice_namesTheEarlierValue() {
        assertThatThrownBy(() -> Interlock.builder("mem:x")
                        .defaultLease(Duration.ofSeconds(5))
                        .defaultLease(Duration.ofSeconds(6)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("PT5S");
    }
}
