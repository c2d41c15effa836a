package dev.interlock.redis;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.Owner;
import dev.interlock.Ticker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Barging;
import dev.interlock.spi.support.Log;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The {@code redis:} backend: a thin adapter from the SPI to {@link RedisLockStore} (the scripts)
 * and {@link RedisWakeups} (release notices). See docs/redis.md.
 */
final class RedisLockBackend implements LockBackend {
    final RedisLockStore store;
    final RedisWakeups wakeups;
    final Ticker ticker;
    final Clock clock;
    final long pollNanos;
    /** How long a command may take before it is judged hung; bounds the wait for a subscription. */
    final long timeoutNanos;
    /** Bounded barging: the fence value each release of a writer of this space left, and the takes in a row. */
    final Barging barging;
    /** Words this space's failures. */
    final BackendFailures failures;
    /** Leaves of abandoned attempts that got no answer, sent again until the server answers. */
    final RedisLeftovers leftovers;

    private final AutoCloseable onClose;
    /**
     * This space's writers and permit waiters queued for each lock, by name and owner id: a release
     * of this space hands the lock (or the permit it frees) straight to the first in the queue if it
     * is one of them (docs/redis.md, "Hand-off"), which saves that waiter its try.
     */
    private final ConcurrentHashMap<String, ConcurrentHashMap<String, RedisAttempt>> handOffWaiters =
            new ConcurrentHashMap<>();
    /** At most this many candidates go with a release. */
    private static final int MAX_CANDIDATES = 16;

    /**
     * @param onClose closes what this backend owns (the client it made), or nothing for an injected client
     */
    RedisLockBackend(
            RedisLockStore store,
            RedisWakeups wakeups,
            Ticker ticker,
            Clock clock,
            Duration poll,
            Duration timeout,
            int barge,
            AutoCloseable onClose) {
        this.store = store;
        this.wakeups = wakeups;
        store.onPublished(wakeups::deliver);
        this.ticker = ticker;
        this.clock = clock;
        this.pollNanos = poll.toNanos();
        this.timeoutNanos = timeout.toNanos();
        this.barging = new Barging(barge);
        this.failures = new BackendFailures(store.description());
        this.leftovers = new RedisLeftovers(store);
        this.onClose = onClose;
    }

    void queuedForHandOff(String name, String ownerId, RedisAttempt attempt) {
        handOffWaiters.compute(name, (k, m) -> {
            ConcurrentHashMap<String, RedisAttempt> map = m != null ? m : new ConcurrentHashMap<>(4);
            map.put(ownerId, attempt);
            return map;
        });
    }

    void notQueuedForHandOff(String name, String ownerId) {
        handOffWaiters.computeIfPresent(name, (k, m) -> {
            m.remove(ownerId);
            return m.isEmpty() ? null : m;
        });
    }

    /** Owner id and lease ms of this space's writers and permit waiters queued for {@code name}, in pairs, for a release. */
    List<String> handOffCandidates(String name) {
        Map<String, RedisAttempt> m = handOffWaiters.get(name);
        if (m == null || m.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(4);
        for (RedisAttempt a : m.values()) {
            if (out.size() >= 2 * MAX_CANDIDATES) {
                break;
            }
            out.add(a.ownerId());
            out.add(Long.toString(a.leaseMs()));
        }
        return out;
    }

    /**
     * A release of this space handed {@code name} (the lock, or a permit) to {@code ownerId}: gives
     * the grant to that waiting attempt. If it has stopped waiting meanwhile, its leave script drops the grant.
     */
    void handed(String name, String ownerId, long token, long sentAt) {
        Map<String, RedisAttempt> m = handOffWaiters.get(name);
        RedisAttempt a = m == null ? null : m.get(ownerId);
        if (a != null) {
            a.handOver(token, sentAt);
        }
    }

    @Override
    public String description() {
        return store.description();
    }

    @Override
    public LeaseKind leaseKind() {
        return LeaseKind.RENEWED;
    }

    /**
     * Break by owner; tokens from a counter that never expires (with the server's time as a
     * floor after data loss, see docs/redis.md); waiters counted and queued in order; semaphores
     * (docs/semaphores.md), each permit a holder entry with its own lease.
     */
    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(
                Capability.BREAK,
                Capability.STRICT_FENCING,
                Capability.WAITER_COUNT,
                Capability.QUEUE,
                Capability.SEMAPHORE);
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        return new RedisAttempt(this, spec);
    }

    @Override
    public LockInfo inspect(String name) {
        RedisLockStore.Snapshot s = store.inspect(name);
        List<HolderInfo> queued = holders(s.waiters());
        int limit = s.holders().isEmpty() ? 0 : s.holders().get(0).limit(); // every holder states the same one
        return LockInfo.builder(name)
                .holders(holders(s.holders()))
                .waiters(queued.size())
                .queued(queued)
                .limit(limit)
                .build();
    }

    @Override
    public List<LockInfo> list() {
        List<LockInfo> out = new ArrayList<>();
        for (String name : store.names()) {
            out.add(inspect(name));
        }
        return out;
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        return store.breakAndTell(name, ownerId);
    }

    /** Loss channels of this space's live grants, by owner id, for breaks announced on the process's channel. */
    private final Map<String, AcquireSpec> live = new ConcurrentHashMap<>();

    /**
     * Listens, while {@code spec}'s grant lives, on its process's loss channel: a break by another
     * process is then pushed to the core at once instead of being found at the next renewal. The
     * subscription is asynchronous; a break it misses is still found by that renewal.
     */
    AutoCloseable listenForLoss(AcquireSpec spec) {
        if (!wakeups.ownConnection()) {
            // An application's own client: no subscription at every grant on its pool; a break is
            // then found at the next renewal (docs/redis.md).
            return () -> {};
        }
        live.put(spec.owner().id(), spec);
        return wakeups.listen(store.lostChannel(spec.owner().id()), this::lossAnnounced);
    }

    void stopListening(AcquireSpec spec, AutoCloseable watch) {
        live.remove(spec.owner().id());
        try {
            watch.close();
        } catch (Exception e) {
            // closing a watch does not fail
        }
    }

    /** A message on a loss channel: {@code OWNER LOCKKEY}. */
    private void lossAnnounced(String message) {
        int sp = message.indexOf(' ');
        AcquireSpec spec = live.get(sp < 0 ? message : message.substring(0, sp));
        if (spec != null) {
            spec.lossChannel().lost("the lock was broken on the server (another process removed it by owner)", null);
        }
    }

    /** Holder descriptions on this host's wall clock (for display only: the server's clock decides). */
    List<HolderInfo> holders(List<RedisLockStore.Entry> entries) {
        Instant now = clock.instant();
        List<HolderInfo> out = new ArrayList<>();
        for (RedisLockStore.Entry e : entries) {
            Optional<String> host = Optional.empty();
            long pid = -1;
            try {
                Owner o = Owner.parse(e.ownerId());
                host = Optional.of(o.host());
                pid = o.pid();
            } catch (IllegalArgumentException notOurs) {
                // an owner id of another form: shown as it is
            }
            out.add(new HolderInfo(
                    e.mode(),
                    Optional.of(e.ownerId()),
                    host,
                    pid,
                    Optional.of(now.minusMillis(e.ageMs())),
                    e.waiting() ? Optional.empty() : Optional.of(now.plusMillis(e.leftMs())),
                    e.token().isPresent() ? OptionalLong.of(e.token().getAsLong()) : OptionalLong.empty(),
                    e.leaseMs() > 0 ? Optional.of(Duration.ofMillis(e.leaseMs())) : Optional.empty(),
                    Optional.empty(),
                    e.waiting()));
        }
        return out;
    }

    @Override
    public void close() {
        leftovers.close();
        try {
            wakeups.close();
        } finally {
            try {
                onClose.close();
            } catch (Exception e) {
                Log.of(RedisLockBackend.class)
                        .debug("{} - closing the client failed: {}", description(), e.getMessage());
            }
        }
    }
}
