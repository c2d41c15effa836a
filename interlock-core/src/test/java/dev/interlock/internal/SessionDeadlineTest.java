package dev.interlock.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.HolderInfo;
import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LossChannel;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A session lease's deadline, as its backend reports it, reaches what guards the work (the
 * renewal listeners {@code interlock run}'s sentinel is armed from), with its margin, and only
 * when it moved enough to matter.
 */
class SessionDeadlineTest {
    private final AtomicReference<LossChannel> channel = new AtomicReference<>();

    private final LockBackend sessionBackend = new LockBackend() {
        @Override
        public String description() {
            return "session:";
        }

        @Override
        public LeaseKind leaseKind() {
            return LeaseKind.SESSION;
        }

        @Override
        public Attempt attempt(AcquireSpec spec) {
            return new Attempt() {
                @Override
                public Optional<Grant> tryAcquire() {
                    channel.set(spec.lossChannel());
                    spec.lossChannel().sessionDeadline(1_000, 1_300); // reported before the lease starts
                    return Optional.of(new Grant() {
                        @Override
                        public long token() {
                            return 1;
                        }

                        @Override
                        public Instant acquiredAt() {
                            return Instant.EPOCH;
                        }

                        @Override
                        public void renew(Duration lease) {}

                        @Override
                        public void release() {}
                    });
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

    @Test
    void theReportedDeadline_reachesTheListeners_withItsMargin_whenItMovedAQuarterOfTheMargin() throws Exception {
        List<Long> told = new CopyOnWriteArrayList<>();
        try (LockSpace space = Interlock.builder(sessionBackend).ticker(() -> 0).open();
                Lease lease = space.acquire("a")) {
            Leases.onRenewed(lease, told::add);
            assertThat(told).as("the deadline reported at the grant").containsExactly(1_300L);
            assertThat(Leases.lossMarginNanos(lease)).isEqualTo(300);
            channel.get().sessionDeadline(1_050, 1_350);
            assertThat(told).as("moved less than a quarter of the margin").containsExactly(1_300L);
            channel.get().sessionDeadline(1_100, 1_400);
            assertThat(told).containsExactly(1_300L, 1_400L);
        }
    }
}
