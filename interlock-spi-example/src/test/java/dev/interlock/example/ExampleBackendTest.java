package dev.interlock.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Spaces;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ExampleBackendTest {
    @Test
    void runsAsANamedModule_thatTheCoresInternalsAreNotExportedTo() {
        Module example = ExampleBackend.class.getModule();
        assertThat(example.isNamed()).as("on the module path").isTrue();
        assertThat(example.getName()).isEqualTo("dev.interlock.example");
        Module core = Interlock.class.getModule();
        assertThat(core.getName()).isEqualTo("dev.interlock");
        assertThat(core.isExported("dev.interlock.spi.support", example)).isTrue();
        assertThat(core.isExported("dev.interlock.internal", example)).isFalse();
    }

    @Test
    void locks_waits_andIsWokenByTheRelease() throws Exception {
        // A poll of an hour: only the release's signal can wake the waiter within the test's time.
        try (LockSpace locks = Interlock.open("example:" + UUID.randomUUID() + "?poll=1h")) {
            Lease first = locks.acquire("job", Duration.ofSeconds(1));
            CompletableFuture<Long> second = CompletableFuture.supplyAsync(() -> {
                try (Lease l = locks.acquire("job", Duration.ofSeconds(30))) {
                    return l.token();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            while (locks.status("job").waiters() == 0) {
                Thread.onSpinWait(); // until the waiter has its queue place
            }
            assertThat(second).isNotDone();
            first.close();
            assertThat(second.get(10, TimeUnit.SECONDS)).isGreaterThan(first.token());
        }
    }

    /**
     * The wait itself, at the SPI: a single try keeps no queue place and the poll is an hour, so
     * only the release's {@code ChangeSignal} can end the wait within the test's time.
     */
    @Test
    void anAttemptsWait_isEndedByTheRelease() throws Exception {
        try (LockSpace locks = Interlock.open("example:" + UUID.randomUUID() + "?poll=1h")) {
            Lease holder = locks.acquire("job", Duration.ofSeconds(1));
            AcquireSpec spec = new AcquireSpec("job", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofSeconds(30));
            try (Attempt attempt = Spaces.backend(locks).attempt(spec)) {
                assertThat(attempt.tryAcquire()).isEmpty();
                AtomicReference<Thread> waiter = new AtomicReference<>();
                CompletableFuture<Void> waited = CompletableFuture.runAsync(() -> {
                    waiter.set(Thread.currentThread());
                    try {
                        attempt.await(TimeUnit.HOURS.toNanos(1));
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                while (waiter.get() == null || waiter.get().getState() != Thread.State.TIMED_WAITING) {
                    Thread.onSpinWait(); // until the attempt waits
                }
                holder.close();
                waited.get(10, TimeUnit.SECONDS);
                Grant g = attempt.tryAcquire().orElseThrow();
                assertThat(g.token()).isGreaterThan(holder.token());
                g.release();
            }
        }
    }

    @Test
    void aMisspeltOption_isRefusedInWords() {
        assertThatThrownBy(() -> Interlock.open("example:x?pol=1s"))
                .hasMessageContaining("unknown option 'pol' (did you mean 'poll'?)");
        assertThatThrownBy(() -> Interlock.open("example:x?poll=soon")).hasMessageContaining("poll must be a duration");
    }
}
