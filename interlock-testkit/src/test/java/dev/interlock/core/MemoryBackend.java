package dev.interlock.core;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.Mode;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A lease-based backend in memory, exclusive only, for testing the core's lease rules (renewal,
 * loss before expiry) against an injected ticker. Failures are switched on by tests.
 */
public final class MemoryBackend implements LockBackend {
    /** Backends by namespace, so tests can reach the one a space opened. */
    public static final Map<String, MemoryBackend> OPENED = new ConcurrentHashMap<>();

    final BackendConfig config;
    final Map<String, Holder> held = new ConcurrentHashMap<>();
    final AtomicLong tokens = new AtomicLong();
    public volatile boolean renewFails;
    public volatile boolean stolen;
    /** When set, renewals of names starting with "hang" block until it opens. */
    public volatile java.util.concurrent.CountDownLatch hang;
    public final AtomicInteger renewals = new AtomicInteger();
    public final AtomicInteger releases = new AtomicInteger();

    record Holder(String owner, long expires) {}

    MemoryBackend(BackendConfig config) {
        this.config = config;
    }

    public static final class Provider implements LockBackendProvider {
        @Override
        public Set<String> schemes() {
            return Set.of("mem");
        }

        @Override
        public String description() {
            return "in-memory test backend";
        }

        @Override
        public LockBackend open(BackendConfig config) {
            MemoryBackend b = new MemoryBackend(config);
            OPENED.put(config.location(), b);
            return b;
        }
    }

    @Override
    public String description() {
        return "mem:" + config.location();
    }

    @Override
    public boolean leaseBased() {
        return true;
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        return new Attempt() {
            @Override
            public Optional<Grant> tryAcquire() {
                long now = config.ticker().read();
                Holder mine = new Holder(spec.owner().id(), now + spec.lease().toNanos());
                Holder h = held.compute(spec.name(), (k, cur) -> cur == null || cur.expires - now <= 0 ? mine : cur);
                if (h != mine) {
                    return Optional.empty();
                }
                long token = tokens.incrementAndGet();
                return Optional.of(new Grant() {
                    @Override
                    public long token() {
                        return token;
                    }

                    @Override
                    public Instant acquiredAt() {
                        return config.clock().instant();
                    }

                    @Override
                    public void renew(Duration lease) {
                        renewals.incrementAndGet();
                        java.util.concurrent.CountDownLatch h = hang;
                        if (h != null && spec.name().startsWith("hang")) {
                            try {
                                h.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new LockBackendException(description(), spec.name(), "interrupted", e, true);
                            }
                        }
                        if (stolen) {
                            throw new LockLostException(description(), spec.name(), "stolen", null);
                        }
                        if (renewFails) {
                            throw new LockBackendException(description(), spec.name(), "server unreachable", null, true);
                        }
                        long t = config.ticker().read();
                        held.computeIfPresent(spec.name(), (k, cur) -> cur.owner.equals(spec.owner().id()) ? new Holder(cur.owner, t + lease.toNanos()) : cur);
                    }

                    @Override
                    public void release() {
                        releases.incrementAndGet();
                        held.computeIfPresent(spec.name(), (k, cur) -> cur.owner.equals(spec.owner().id()) ? null : cur);
                    }
                });
            }

            @Override
            public void await(long nanos) throws InterruptedException {
                Thread.sleep(1);
            }

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
        Holder h = held.get(name);
        return new LockInfo(name, h == null ? List.of() : List.of(new HolderInfo(Mode.EXCLUSIVE, Optional.of(h.owner), Optional.empty(), -1,
                Optional.empty(), Optional.empty(), OptionalLong.empty())), -1);
    }

    @Override
    public List<LockInfo> list() {
        return held.keySet().stream().sorted().map(this::inspect).toList();
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        return held.computeIfPresent(name, (k, cur) -> cur.owner.equals(ownerId) ? null : cur) == null;
    }

    @Override
    public void close() {}
}
