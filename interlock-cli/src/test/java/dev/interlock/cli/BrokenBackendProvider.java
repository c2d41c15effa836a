package dev.interlock.cli;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A deliberately broken backend for the tests of {@code interlock verify}, which must catch it.
 * {@code broken:grant} grants every acquisition at once, whoever holds the lock, with tokens that
 * still increase (microseconds of the wall clock, made unique per process), so only the counter
 * and the overlaps can give it away; it claims semaphores too and ignores their limit, so
 * {@code verify --limit} must find the overbooking from its permit slots; {@code broken:unusable} opens, but every acquisition fails
 * (and it has no semaphores)
 * as an unreachable server would; {@code broken:flaky} fails the first {@value #FLAKY_FAILURES} tries of
 * each space as a paused server would (transient), then grants as {@code broken:grant} does.
 */
public final class BrokenBackendProvider implements LockBackendProvider {
    static final int FLAKY_FAILURES = 3;

    @Override
    public Set<String> schemes() {
        return Set.of("broken");
    }

    @Override
    public String description() {
        return "a backend that does not exclude (tests only)";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        boolean unusable = config.location().equals("unusable");
        boolean flaky = config.location().equals("flaky");
        if (!unusable && !flaky && !config.location().equals("grant")) {
            throw new IllegalArgumentException(
                    "broken: takes grant, unusable or flaky, got '" + config.location() + "'");
        }
        return new Broken("broken:" + config.location(), unusable, flaky ? FLAKY_FAILURES : 0);
    }

    private static final class Broken implements LockBackend {
        private static final AtomicLong LAST = new AtomicLong();
        private final String description;
        private final boolean unusable;
        private final java.util.concurrent.atomic.AtomicInteger failuresLeft;

        Broken(String description, boolean unusable, int failures) {
            this.description = description;
            this.unusable = unusable;
            this.failuresLeft = new java.util.concurrent.atomic.AtomicInteger(failures);
        }

        @Override
        public String description() {
            return description;
        }

        @Override
        public boolean leaseBased() {
            return false;
        }

        @Override
        public Set<Capability> capabilities() {
            // Only broken:grant claims semaphores: the others are the tests' backend without them.
            return description.equals("broken:grant") ? Set.of(Capability.SEMAPHORE) : Set.of();
        }

        @Override
        public Attempt attempt(AcquireSpec spec) {
            return new Attempt() {
                @Override
                public Optional<Grant> tryAcquire() {
                    if (unusable) {
                        throw new LockBackendException(
                                description,
                                spec.name(),
                                description + " - connection refused by the lock" + " server (is it running?)",
                                null);
                    }
                    if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        throw new LockBackendException(
                                description,
                                spec.name(),
                                description + " - no answer within the timeout (the" + " server is paused)",
                                null,
                                true);
                    }
                    long micros = Instant.now().toEpochMilli() * 1000
                            + ProcessHandle.current().pid() % 1000;
                    long token = LAST.updateAndGet(last -> Math.max(last + 1000, micros));
                    Instant at = Instant.now();
                    return Optional.of(new Grant() {
                        @Override
                        public long token() {
                            return token;
                        }

                        @Override
                        public Instant acquiredAt() {
                            return at;
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
            return LockInfo.of(name, List.of(), 0);
        }

        @Override
        public List<LockInfo> list() {
            return List.of();
        }

        @Override
        public void close() {}
    }
}
