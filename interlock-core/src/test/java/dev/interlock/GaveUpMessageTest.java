package dev.interlock;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A wait that gives up while the backend fails says how long the backend had been failing. */
class GaveUpMessageTest {
    private final AtomicLong now = new AtomicLong();

    /** Every try takes {@code tryNanos} of the manual ticker, then fails as a paused server's does. */
    private LockBackend failingAfter(long tryNanos) {
        return new LockBackend() {
            @Override
            public String description() {
                return "slow:";
            }

            @Override
            public Attempt attempt(AcquireSpec spec) {
                return new Attempt() {
                    @Override
                    public Optional<Grant> tryAcquire() {
                        now.addAndGet(tryNanos);
                        throw new LockBackendException("slow:", spec.name(), "the server did not answer", null, true);
                    }

                    @Override
                    public void await(long nanos) {}

                    @Override
                    public List<HolderInfo> blockers() {
                        return List.of();
                    }

                    @Override
                    public void close() {}
                };
            }

            @Override
            public LockInfo inspect(String name) {
                throw new UnsupportedOperationException();
            }

            @Override
            public List<LockInfo> list() {
                return List.of();
            }

            @Override
            public void close() {}
        };
    }

    @Test
    void aFirstTryThatTookTheWholeWait_countsAsFailingForItsLength_notZero() throws Exception {
        try (LockSpace space = Interlock.builder(failingAfter(TimeUnit.SECONDS.toNanos(3)))
                .ticker(now::get)
                .open()) {
            assertThatThrownBy(() -> space.acquire("a", Duration.ofSeconds(2)))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("gave up waiting for 'a' after 3000ms")
                    .hasMessageContaining("the backend had failed for the last 3000ms");
        }
    }
}
