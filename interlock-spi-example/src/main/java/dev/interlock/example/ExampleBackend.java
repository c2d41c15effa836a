package dev.interlock.example;

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
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.ChangeSignal;
import dev.interlock.spi.support.QueuePlace;
import dev.interlock.spi.support.UriOptions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * {@code example:NAMESPACE}: a lock table in this JVM's memory, kept the way a database backend
 * keeps its rows, to show the support layer in use (docs/spi.md, "Usage"). Each operation on the
 * table is one atomic step under the table's lock, as a statement would be; a waiter waits on the
 * table's {@link ChangeSignal}, polls with {@link Backoff} as a safety net, and keeps a
 * {@link QueuePlace} so that a waiting writer keeps new readers out. Failures are worded by
 * {@link BackendFailures}; the {@code poll} option is read by {@link UriOptions}.
 */
public final class ExampleBackend implements LockBackend {
    private static final Map<String, Table> TABLES = new ConcurrentHashMap<>();

    /** One namespace's rows; every method is one atomic step. */
    private static final class Table {
        final ReentrantLock lock = new ReentrantLock();
        final ChangeSignal changes = new ChangeSignal();
        final Map<String, Row> rows = new TreeMap<>();
        final Ticker ticker;

        Table(Ticker ticker) {
            this.ticker = ticker;
        }
    }

    private static final class Row {
        long lastToken;
        final Map<String, Held> holders = new LinkedHashMap<>();
        /** Queue places by owner id, in arrival order. */
        final Map<String, Held> queue = new LinkedHashMap<>();
    }

    /** A holder or a queue place: mode, fencing token (0 for a place), expiry on the table's ticker. */
    private static final class Held {
        final AcquireSpec spec;
        final long token;
        final Instant since;
        long expires;

        Held(AcquireSpec spec, long token, Instant since, long expires) {
            this.spec = spec;
            this.token = token;
            this.since = since;
            this.expires = expires;
        }
    }

    private final Table table;
    private final String description;
    private final BackendFailures failures;
    private final Clock clock;
    private final Duration poll;

    private ExampleBackend(Table table, String description, Clock clock, Duration poll) {
        this.table = table;
        this.description = description;
        this.failures = new BackendFailures(description);
        this.clock = clock;
        this.poll = poll;
    }

    static ExampleBackend open(BackendConfig config) {
        String location = config.location();
        int q = location.indexOf('?');
        String namespace = q < 0 ? location : location.substring(0, q);
        if (namespace.isEmpty()) {
            throw new IllegalArgumentException(
                    "example: needs a namespace, e.g. example:test (got '" + config.maskedUri() + "')");
        }
        Map<String, String> options =
                UriOptions.parse(q < 0 ? null : location.substring(q + 1), "example:", List.of("poll"), v -> v);
        Duration poll = options.containsKey("poll")
                ? UriOptions.duration(
                        "example URI option ", "poll", options.get("poll"), Duration.ofMillis(1), Duration.ofHours(1))
                : Duration.ofSeconds(1);
        Table table = TABLES.computeIfAbsent(namespace, n -> new Table(config.ticker()));
        return new ExampleBackend(table, "example:" + namespace, config.clock(), poll);
    }

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
        return Set.of(Capability.BREAK, Capability.STRICT_FENCING, Capability.WAITER_COUNT, Capability.QUEUE);
    }

    /** Runs {@code step} as one atomic step on the table, after dropping what has expired. */
    private <T> T atomically(Function<Long, T> step) {
        table.lock.lock();
        try {
            long now = table.ticker.read();
            for (Row r : table.rows.values()) {
                if (r.holders.values().removeIf(h -> now - h.expires >= 0)
                        | r.queue.values().removeIf(h -> now - h.expires >= 0)) {
                    table.changes.signal();
                }
            }
            return step.apply(now);
        } finally {
            table.lock.unlock();
        }
    }

    private static boolean conflicts(Mode a, Mode b) {
        return a == Mode.EXCLUSIVE || b == Mode.EXCLUSIVE;
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        if (spec.permits() != 1) {
            throw new IllegalArgumentException(
                    description + " - semaphores (permits " + spec.permits() + ") are not supported");
        }
        return new ExampleAttempt(spec);
    }

    private final class ExampleAttempt implements Attempt {
        final AcquireSpec spec;
        final String owner;
        final QueuePlace place;
        final Backoff backoff = Backoff.fixed(poll);
        long seen;
        List<HolderInfo> blockers = List.of();

        ExampleAttempt(AcquireSpec spec) {
            this.spec = spec;
            this.owner = spec.owner().id();
            this.place = new QueuePlace(spec.lease(), table.ticker, new QueuePlace.Keeper() {
                @Override
                public boolean take(Duration lease) {
                    return atomically(now -> {
                        Row row = table.rows.computeIfAbsent(spec.name(), n -> new Row());
                        Held mine = row.queue.computeIfAbsent(owner, o -> new Held(spec, 0, clock.instant(), 0));
                        mine.expires = now + lease.toNanos();
                        return true;
                    });
                }

                @Override
                public void giveUp() {
                    atomically(now -> {
                        Row row = table.rows.get(spec.name());
                        if (row != null && row.queue.remove(owner) != null) {
                            table.changes.signal(); // the waiters behind this place may go now
                        }
                        return null;
                    });
                }
            });
        }

        @Override
        public Optional<Grant> tryAcquire() {
            seen = table.changes.version(); // before the try: a change after it ends the wait at once
            return atomically(now -> {
                Row row = table.rows.computeIfAbsent(spec.name(), n -> new Row());
                List<HolderInfo> in = new ArrayList<>();
                for (Held h : row.holders.values()) {
                    if (conflicts(spec.mode(), h.spec.mode())) {
                        in.add(info(h, false));
                    }
                }
                for (Map.Entry<String, Held> w : row.queue.entrySet()) {
                    if (w.getKey().equals(owner)) {
                        break; // only the places ahead of ours count
                    }
                    if (conflicts(spec.mode(), w.getValue().spec.mode())) {
                        in.add(info(w.getValue(), true));
                    }
                }
                if (!in.isEmpty()) {
                    blockers = in;
                    return Optional.empty();
                }
                row.queue.remove(owner);
                place.granted();
                Held mine = new Held(
                        spec,
                        ++row.lastToken,
                        clock.instant(),
                        now + spec.lease().toNanos());
                row.holders.put(owner, mine);
                return Optional.of(new ExampleGrant(mine));
            });
        }

        @Override
        public void await(long nanos) throws InterruptedException {
            if (spec.waits()) {
                place.keep(); // takes the place at the first wait, renews it when a third of its lease has passed
            }
            long slice = Math.min(Math.min(nanos, backoff.nextNanos()), place.nanosUntilDue());
            try {
                table.changes.awaitChange(seen, slice); // a spurious return is fine: the core tries again
            } catch (InterruptedException e) {
                throw failures.interruptedWaiting(spec.name());
            }
        }

        @Override
        public List<HolderInfo> blockers() {
            return blockers;
        }

        @Override
        public void close() {
            place.close();
        }
    }

    private final class ExampleGrant implements Grant {
        final Held mine;

        ExampleGrant(Held mine) {
            this.mine = mine;
        }

        @Override
        public long token() {
            return mine.token;
        }

        @Override
        public Instant acquiredAt() {
            return mine.since;
        }

        @Override
        public void renew(Duration lease) {
            atomically(now -> {
                if (!ours()) {
                    throw failures.lost(
                            mine.spec.name(),
                            mine.token,
                            "no longer held by " + mine.spec.owner().id() + " (its lease ran out, or it was broken)",
                            null);
                }
                mine.expires = now + lease.toNanos();
                return null;
            });
        }

        @Override
        public void release() {
            releaseIfOwned();
        }

        @Override
        public boolean releaseIfOwned() {
            return atomically(now -> {
                if (!ours()) {
                    return false;
                }
                table.rows
                        .get(mine.spec.name())
                        .holders
                        .remove(mine.spec.owner().id());
                table.changes.signal();
                return true;
            });
        }

        /** Still this grant's row entry (the caller holds the table's lock). */
        private boolean ours() {
            Row row = table.rows.get(mine.spec.name());
            return row != null && row.holders.get(mine.spec.owner().id()) == mine;
        }
    }

    private HolderInfo info(Held h, boolean waiting) {
        long left = h.expires - table.ticker.read();
        HolderInfo.Builder b = HolderInfo.builder(h.spec.mode())
                .ownerId(h.spec.owner().id())
                .host(h.spec.owner().host())
                .pid(h.spec.owner().pid())
                .since(h.since)
                .lease(h.spec.lease())
                .waiting(waiting);
        if (!waiting) {
            b.token(h.token).validUntil(clock.instant().plusNanos(Math.max(0, left)));
        }
        return b.build();
    }

    @Override
    public LockInfo inspect(String name) {
        return atomically(now -> {
            Row row = table.rows.get(name);
            if (row == null) {
                return LockInfo.builder(name).build();
            }
            List<HolderInfo> holders = new ArrayList<>();
            row.holders.values().forEach(h -> holders.add(info(h, false)));
            List<HolderInfo> queued = new ArrayList<>();
            row.queue.values().forEach(h -> queued.add(info(h, true)));
            return LockInfo.builder(name)
                    .holders(holders)
                    .waiters(queued.size())
                    .queued(queued)
                    .build();
        });
    }

    @Override
    public List<LockInfo> list() {
        List<String> names = atomically(now -> new ArrayList<>(table.rows.keySet())); // a TreeMap: sorted
        List<LockInfo> out = new ArrayList<>();
        for (String n : names) {
            out.add(inspect(n));
        }
        return out;
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        return atomically(now -> {
            Row row = table.rows.get(name);
            if (row == null || row.holders.remove(ownerId) == null) {
                return false;
            }
            table.changes.signal();
            return true;
        });
    }

    @Override
    public void close() {}

    /** Forgets namespace {@code namespace} (tests that reuse names). */
    public static void forget(String namespace) {
        TABLES.remove(namespace);
    }
}
