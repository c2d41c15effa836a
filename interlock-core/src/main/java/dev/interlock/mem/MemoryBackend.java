package dev.interlock.mem;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.Mode;
import dev.interlock.Ticker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LossChannel;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.ChangeSignal;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The {@code mem:NAMESPACE} backend: locks in this JVM's memory, shared by every lock space opened
 * on the same namespace. It is the reference implementation of the SPI (every rule in
 * {@code docs/spi.md} in readable form, with the parts listed below) and the fastest test double
 * for code that uses Interlock: open {@code mem:test} in a test instead of a real backend.
 *
 * <p>It keeps every promise of the other backends within one JVM: exclusive and shared modes,
 * writers not starved (a FIFO queue of waiters, as {@code dir:} keeps), leases that expire on the
 * space's ticker unless renewed, strictly increasing fencing tokens, break by owner, waiters
 * woken at once, and counting semaphores (a name held by up to N holders, each with its own lease
 * and token, waiters served in arrival order). For tests it can also misbehave on purpose: {@link #cut()} makes every call fail
 * as an unreachable server would, {@link #pause()} makes calls hang, {@link #takeAway} removes a
 * holder as another host reclaiming it would, and {@link #reportLoss} pushes a loss through the
 * SPI's loss channel. {@link #calls()} counts what the core asked of it.
 *
 * <p>Thread-safe: each name has its own lock, which guards its state, and its own
 * {@link ChangeSignal}, on which its waiters wait, so that names never contend with each other; a
 * try that finds the name busy builds nothing but the list of who blocked it. Its messages are
 * made by {@link BackendFailures}. It uses nothing of the core that a backend in another module
 * could not: only {@code dev.interlock}, {@code dev.interlock.spi} and
 * {@code dev.interlock.spi.support} (docs/spi.md, "Usage").
 *
 * <p>Its parts, each in its own file of this package: a name's state ({@code Entry}, its
 * {@code Holder}s), a granted lock ({@code MemGrant}), and the failures tests ask for
 * ({@code MemoryFaults}); the acquisition, which waits in the name's queue, is here.
 */
public final class MemoryBackend implements LockBackend {
    private static final Map<String, MemoryBackend> NAMESPACES = new ConcurrentHashMap<>();

    private final String namespace;
    private final String description;
    final BackendFailures failures;
    private final Clock clock;
    final Ticker ticker;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    /** The test-made failures and hangs ({@link #cut()}, {@link #pause()}) every call passes through. */
    final MemoryFaults faults;

    final Calls calls = new Calls();
    private final AtomicInteger opened = new AtomicInteger();

    private MemoryBackend(String namespace, BackendConfig config) {
        this.namespace = namespace;
        this.description = "mem:" + namespace;
        this.failures = new BackendFailures(description);
        this.faults = new MemoryFaults(failures);
        this.clock = config.clock();
        this.ticker = config.ticker();
    }

    /**
     * The backend of {@code namespace}: every space opened on {@code mem:namespace} shares it (and
     * the first one's ticker and clock). Made on first use; forgotten by {@link #forget}.
     */
    static MemoryBackend open(BackendConfig config) {
        String ns = config.location();
        if (ns.isEmpty() || ns.indexOf('?') >= 0 || ns.indexOf('#') >= 0) {
            throw new IllegalArgumentException(
                    "mem: needs a namespace name without options, e.g. mem:test (got '" + config.maskedUri() + "')");
        }
        MemoryBackend b = NAMESPACES.computeIfAbsent(ns, n -> new MemoryBackend(n, config));
        b.opened.incrementAndGet();
        return b;
    }

    /** The backend of {@code mem:namespace}, for tests that want to misbehave it; empty if never opened. */
    public static Optional<MemoryBackend> of(String namespace) {
        return Optional.ofNullable(NAMESPACES.get(namespace));
    }

    /** Drops namespace {@code namespace} and all its state (tests that reuse names). */
    public static void forget(String namespace) {
        NAMESPACES.remove(namespace);
    }

    // ------------------------------------------------------------------------------------ state

    /** Removes expired holders (the server's own expiry); the caller holds the entry's lock. */
    void expire(Entry e) {
        if (e.holders.isEmpty()) {
            return;
        }
        long now = ticker.read();
        if (e.holders.values().removeIf(h -> now - h.expires >= 0)) {
            e.changed();
        }
    }

    /** The entry of {@code name}, made if absent, with its lock held. */
    private Entry locked(String name) {
        while (true) {
            Entry e = entries.get(name);
            if (e == null) {
                e = entries.computeIfAbsent(name, n -> new Entry());
            }
            e.lock.lock();
            if (!e.removed) {
                return e;
            }
            e.lock.unlock();
        }
    }

    /** The entry of {@code name} with its lock held, or null if there is none. */
    private Entry lockedIfPresent(String name) {
        while (true) {
            Entry e = entries.get(name);
            if (e == null) {
                return null;
            }
            e.lock.lock();
            if (!e.removed) {
                return e;
            }
            e.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------ SPI

    @Override
    public String description() {
        return description;
    }

    @Override
    public LeaseKind leaseKind() {
        return LeaseKind.RENEWED;
    }

    @Override
    public Set<Capability> capabilities() {
        return Collections.unmodifiableSet(EnumSet.of(
                Capability.BREAK,
                Capability.STRICT_FENCING,
                Capability.WAITER_COUNT,
                Capability.QUEUE,
                Capability.SEMAPHORE));
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        if (spec.permits() != 1) {
            throw new IllegalArgumentException(
                    description + " - taking " + spec.permits() + " permits in one acquisition is not supported yet");
        }
        return new MemAttempt(spec);
    }

    /**
     * One acquisition: a try succeeds if the mode is compatible with every holder and no earlier
     * waiter in the queue conflicts (a writer waits for any earlier waiter, a reader for an earlier
     * writer): so waiters are served in arrival order, and once a writer waits no new reader gets
     * in. An attempt joins the queue at its first failed try and leaves it when closed.
     */
    final class MemAttempt implements Attempt {
        final AcquireSpec spec;
        /** The entry of the last try (a queued attempt keeps it from being dropped). */
        Entry entry;

        long seen = -1; // the entry's version at the last try
        boolean queued;
        /** Who blocked the last try: holders and earlier waiters, made into HolderInfo only if asked. */
        List<Object> blockedBy = List.of();

        MemAttempt(AcquireSpec spec) {
            this.spec = spec;
        }

        private boolean conflicts(Mode other) {
            return spec.mode() == Mode.EXCLUSIVE || other == Mode.EXCLUSIVE;
        }

        @Override
        public Optional<Grant> tryAcquire() {
            faults.enter("acquire", spec.name());
            calls.tries.increment();
            Entry e = locked(spec.name());
            try {
                entry = e;
                seen = e.changes.version();
                expire(e);
                List<Object> in = spec.limit() > 0 ? permitBlockers(e) : lockBlockers(e);
                if (in != null) {
                    blockedBy = in;
                    if (!queued && spec.waits()) { // a single try never waits, so it takes no place in the queue
                        queued = true;
                        e.queue.add(this); // changes nobody's chances: a place behind others wakes no one
                    }
                    return Optional.empty();
                }
                if (queued) {
                    e.queue.remove(this);
                    queued = false;
                }
                long token = ++e.token;
                Holder h = new Holder(
                        spec,
                        token,
                        clock.instant(),
                        ticker.read() + spec.lease().toNanos());
                e.holders.put(spec.owner().id(), h);
                e.changed();
                return Optional.of(new MemGrant(MemoryBackend.this, e, h));
            } finally {
                e.lock.unlock();
            }
        }

        /**
         * Who keeps a plain lock from this try: conflicting holders, and earlier waiters it must
         * not overtake (a writer waits for any, a reader for a writer). A semaphore holder makes
         * the request a mistake, not a wait.
         */
        private List<Object> lockBlockers(Entry e) {
            List<Object> in = null;
            for (Holder h : e.holders.values()) {
                if (h.spec.limit() != 0) {
                    throw failures.limitMismatch(spec.name(), h.spec.limit(), 0);
                }
                if (conflicts(h.spec.mode())) {
                    in = add(in, h);
                }
            }
            for (MemAttempt w : e.queue) {
                if (w == this) {
                    break;
                }
                if (conflicts(w.spec.mode())) {
                    in = add(in, w);
                }
            }
            return in;
        }

        /**
         * Who keeps a permit from this try: null if a permit is free for it, that is if the holders
         * and the waiters queued before it leave one of the limit (so waiters are served in arrival
         * order, and a newcomer never takes the permit an earlier waiter is due). Holders of a plain
         * lock or of another limit make the request a mistake, not a wait.
         */
        private List<Object> permitBlockers(Entry e) {
            for (Holder h : e.holders.values()) {
                if (h.spec.limit() != spec.limit()) {
                    throw failures.limitMismatch(spec.name(), h.spec.limit(), spec.limit());
                }
            }
            int ahead = 0;
            for (MemAttempt w : e.queue) {
                if (w == this) {
                    break;
                }
                ahead++;
            }
            if (e.holders.size() + ahead < spec.limit()) {
                return null;
            }
            List<Object> in = new ArrayList<>(e.holders.size() + ahead);
            in.addAll(e.holders.values());
            for (MemAttempt w : e.queue) {
                if (w == this) {
                    break;
                }
                in.add(w);
            }
            return in;
        }

        private List<Object> add(List<Object> in, Object blocker) {
            List<Object> out = in == null ? new ArrayList<>(2) : in;
            out.add(blocker);
            return out;
        }

        HolderInfo waiterInfo() {
            return HolderInfo.builder(spec.mode())
                    .ownerId(spec.owner().id())
                    .host(spec.owner().host())
                    .pid(spec.owner().pid())
                    .lease(spec.lease())
                    .waiting(true)
                    .build();
        }

        @Override
        public void await(long nanos) throws InterruptedException {
            Entry e = entry;
            if (e == null) {
                return;
            }
            e.changes.awaitChange(seen, nanos); // a dropped entry was signalled: the next try looks the name up again
        }

        @Override
        public List<HolderInfo> blockers() {
            List<HolderInfo> out = new ArrayList<>(blockedBy.size());
            for (Object b : blockedBy) {
                out.add(b instanceof Holder ? info((Holder) b) : ((MemAttempt) b).waiterInfo());
            }
            return List.copyOf(out);
        }

        @Override
        public void close() {
            Entry seenEntry = entry;
            if (!queued && seenEntry != null && seenEntry.token != 0) {
                return; // not queued, and the name was granted before: nothing to undo (a racy read of token only costs
                // a lock)
            }
            Entry e = lockedIfPresent(spec.name());
            if (e == null) {
                return;
            }
            try {
                if (queued) {
                    e.queue.remove(this);
                    queued = false;
                    e.changed();
                }
                if (e.token == 0 && e.holders.isEmpty() && e.queue.isEmpty()) {
                    e.removed = true; // tried, never granted: leaves no trace
                    e.changed();
                    entries.remove(spec.name(), e);
                }
            } finally {
                e.lock.unlock();
            }
        }
    }

    /** Loss channels of live grants, for {@link #reportLoss}. */
    final Map<MemGrant, LossChannel> channels = new ConcurrentHashMap<>();

    private HolderInfo info(Holder h) {
        long left = h.expires - ticker.read();
        return HolderInfo.builder(h.spec.mode())
                .ownerId(h.spec.owner().id())
                .host(h.spec.owner().host())
                .pid(h.spec.owner().pid())
                .since(h.since)
                .validUntil(clock.instant().plusNanos(Math.max(0, left)))
                .token(h.token)
                .lease(h.spec.lease())
                .build();
    }

    @Override
    public LockInfo inspect(String name) {
        faults.enter("status", name);
        Entry e = lockedIfPresent(name);
        if (e == null) {
            return LockInfo.builder(name).waiters(0).build();
        }
        try {
            expire(e);
            List<HolderInfo> holders = new ArrayList<>();
            int limit = 0; // every holder states the same one
            for (Holder h : e.holders.values()) {
                holders.add(info(h));
                limit = h.spec.limit();
            }
            holders.sort((a, b) -> a.mode() == b.mode() ? 0 : a.mode() == Mode.EXCLUSIVE ? -1 : 1);
            List<HolderInfo> queued = new ArrayList<>();
            for (MemAttempt a : e.queue) {
                queued.add(a.waiterInfo());
            }
            return LockInfo.builder(name)
                    .holders(holders)
                    .waiters(queued.size())
                    .queued(queued)
                    .limit(limit)
                    .build();
        } finally {
            e.lock.unlock();
        }
    }

    @Override
    public List<LockInfo> list() {
        List<String> names = new ArrayList<>(entries.keySet());
        Collections.sort(names);
        List<LockInfo> out = new ArrayList<>();
        for (String n : names) {
            out.add(inspect(n));
        }
        return out;
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        faults.enter("break", name);
        return takeAway(name, ownerId);
    }

    @Override
    public void close() {
        opened.decrementAndGet();
    }

    // ------------------------------------------------------------------------------------ test hooks

    /** Makes every call fail as an unreachable server would (a transient LockBackendException), until {@link #restore()}. */
    public void cut() {
        faults.cut();
    }

    /** Undoes {@link #cut()} and {@link #pause()}. */
    public void restore() {
        faults.restore();
    }

    /** Makes every call hang (as a server that accepts but never answers) until {@link #restore()}. */
    public void pause() {
        faults.pause("");
    }

    /** Makes the calls about names starting with {@code prefix} hang until {@link #restore()}. */
    public void pause(String prefix) {
        faults.pause(prefix);
    }

    /**
     * Removes the holder {@code ownerId} of {@code name}, as another host reclaiming an expired
     * lease would: its next renewal finds the lock gone. Returns false if it held nothing.
     */
    public boolean takeAway(String name, String ownerId) {
        Entry e = lockedIfPresent(name);
        if (e == null) {
            return false;
        }
        try {
            if (e.holders.remove(ownerId) == null) {
                return false;
            }
            e.changed();
            return true;
        } finally {
            e.lock.unlock();
        }
    }

    /**
     * Removes {@code ownerId}'s lock on {@code name} and tells its lease at once through the loss
     * channel, as a backend that learns of a loss by itself does (a keyspace event, a session
     * that expired). Returns false if it held nothing.
     */
    public boolean reportLoss(String name, String ownerId, String reason) {
        MemGrant found = null;
        for (MemGrant g : channels.keySet()) {
            if (g.spec.name().equals(name) && g.spec.owner().id().equals(ownerId)) {
                found = g;
            }
        }
        boolean removed = takeAway(name, ownerId);
        if (found != null) {
            LossChannel c = channels.remove(found);
            if (c != null) {
                c.lost(reason, null);
            }
        }
        return removed;
    }

    /** What the core asked of this backend so far. */
    public Calls calls() {
        return calls;
    }

    /** Counters of backend calls, for tests of code that uses locks. */
    public static final class Calls {
        private Calls() {}

        // Adders, not atomics: every try of every thread counts, and must not contend on one word.
        final LongAdder tries = new LongAdder();
        final LongAdder renewals = new LongAdder();
        final LongAdder releases = new LongAdder();

        /** Acquisition tries (a wait makes several). */
        public int tries() {
            return tries.intValue();
        }

        /** Renewals, background and by hand. */
        public int renewals() {
            return renewals.intValue();
        }

        /** Releases, including the one after a loss. */
        public int releases() {
            return releases.intValue();
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
