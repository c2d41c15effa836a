package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ChangeSignalTest {
    private static final long AN_HOUR = TimeUnit.HOURS.toNanos(1);

    @Test
    void aChangeMadeBeforeTheWait_endsItAtOnce_soNoneIsMissed() throws InterruptedException {
        ChangeSignal s = new ChangeSignal();
        long seen = s.version();
        s.signal(); // between the try and the wait
        assertThat(s.awaitChange(seen, AN_HOUR)).isTrue();
        assertThat(s.version()).isEqualTo(seen + 1);
    }

    @Test
    void noChange_andNoTime_returnsFalseWithoutWaiting() throws InterruptedException {
        ChangeSignal s = new ChangeSignal();
        assertThat(s.awaitChange(s.version(), 0)).isFalse();
        assertThat(s.awaitChange(s.version(), -5)).isFalse();
    }

    @Test
    void aShortWait_withoutChange_runsOut() throws InterruptedException {
        ChangeSignal s = new ChangeSignal();
        assertThat(s.awaitChange(s.version(), TimeUnit.MILLISECONDS.toNanos(1))).isFalse();
    }

    @Test
    void aSignalFromAnotherThread_wakesAWaiter() throws Exception {
        ChangeSignal s = new ChangeSignal();
        long seen = s.version();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Boolean> woken = CompletableFuture.supplyAsync(() -> {
            waiter.set(Thread.currentThread());
            try {
                return s.awaitChange(seen, AN_HOUR);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        waitUntilParked(waiter);
        s.signal();
        assertThat(woken.get(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void anInterruptedWait_throws() throws Exception {
        ChangeSignal s = new ChangeSignal();
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Throwable> failed = CompletableFuture.supplyAsync(() -> {
            waiter.set(Thread.currentThread());
            try {
                s.awaitChange(s.version(), AN_HOUR);
                return null;
            } catch (InterruptedException e) {
                return e;
            }
        });
        waitUntilParked(waiter);
        waiter.get().interrupt();
        assertThat(failed.get(10, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
    }

    @Test
    void anInterruptedThread_isNotKeptWaiting() {
        ChangeSignal s = new ChangeSignal();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> s.awaitChange(s.version(), AN_HOUR)).isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
    }

    /** Until the waiting thread is parked in its timed wait (a state, not a guess at a time). */
    private static void waitUntilParked(AtomicReference<Thread> waiter) {
        while (waiter.get() == null || waiter.get().getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
    }
}
