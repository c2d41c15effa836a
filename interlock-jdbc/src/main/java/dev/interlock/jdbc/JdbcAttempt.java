package dev.interlock.jdbc;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One acquisition of a {@code jdbc:} lock.
 *
 * <p>Each try is one conditional statement ({@link LockStore#tryAcquire}). A writer that goes on
 * waiting takes the name's one writer-queue place (its own lease of at most
 * {@link #QUEUE_LEASE_MAX_MS}, renewed every third of it while it waits): while it has the place no
 * new reader joins and no later writer is granted, so a stream of readers cannot starve it, and a
 * waiter that stops (SIGSTOP, a crash) holds the lock up for seconds at most. The place is taken
 * only when the caller waits, never by a plain {@code tryAcquire}.
 *
 * <p>Writers that wait in this JVM form a line per name ({@link Signals.Signal}): only the first
 * tries the database and holds the queue place; the others wait for their turn without a
 * statement, so a release costs one try of the next writer, not one per waiting thread.
 *
 * <p>On PostgreSQL a waiter (reader or writer) also marks the row as wanted, for as long as a
 * queue place, renewed with it: releases send a notification only while the row is wanted, since
 * PostgreSQL serialises the commits of all transactions that notify. The statement that marks
 * also says whether the lock was free at that moment; if so the waiter tries again at once, so a
 * release that came before the mark (and did not notify) is not waited out.
 *
 * <p>Between tries it waits for the name's {@link Signals signal}: a release in this process, or a
 * PostgreSQL notification from any process. A missed signal costs one poll interval: waits start
 * at 10ms and double, jittered, up to the {@code poll} option (while PostgreSQL notifications are
 * being received, up to {@link PgListener#FALLBACK_POLL_MS}).
 */
final class JdbcAttempt implements Attempt {
    private static final Log log = Log.of(JdbcAttempt.class);
    static final long QUEUE_LEASE_MAX_MS = 5000;
    private static final long FIRST_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final JdbcLockBackend backend;
    private final AcquireSpec spec;
    private final String key;
    private final String owner;
    private final Signals.Signal signal;
    private final long queueLeaseNanos;
    private long seen;
    private long nextWait = FIRST_WAIT_NANOS;
    private boolean queued;
    /** Whether this waiter holds a live queue place or waiting mark, written at {@link #placedAt}. */
    private boolean placed;
    private long placedAt;
    private boolean granted;
    private boolean inLine;
    /**
     * The last try failed without an answer and its clean-up failed too (LockStore#tryAcquire): a
     * server that ran it late (after a pause) may have committed a grant to this owner that nobody
     * received. The next try, and closing, first release whatever this owner holds; else the
     * waiter would find the lock held by its own ghost, and wait out the whole lease.
     */
    private boolean uncertain;

    JdbcAttempt(JdbcLockBackend backend, AcquireSpec spec) {
        this.backend = backend;
        this.spec = spec;
        this.key = NameKey.of(spec.name());
        this.owner = Owners.check(spec.owner().id());
        this.signal = backend.signals.acquire(key);
        this.queueLeaseNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(QUEUE_LEASE_MAX_MS, Math.max(100, spec.lease().toMillis())));
    }

    @Override
    public Optional<Grant> tryAcquire() {
        seen = signal.version();
        if (inLine && !signal.first(this)) {
            return Optional.empty(); // not our turn: the first in line is trying
        }
        LockStore.Outcome o;
        try {
            if (uncertain) {
                backend.store.abandon(spec.name(), owner);
                uncertain = false;
            }
            o = backend.store.tryAcquire(spec.name(), spec.mode(), owner, spec.lease());
        } catch (LockBackendException e) {
            uncertain = uncertain || e.isTransient();
            throw e;
        }
        if (o instanceof LockStore.Granted) {
            granted = true;
            queued = false; // a grant clears the queue place
            placed = false;
            leaveLine();
            return Optional.of(new JdbcGrant(backend, spec.name(), key, spec.mode(), owner, (LockStore.Granted) o, backend.clock.instant()));
        }
        return Optional.empty();
    }

    @Override
    public void await(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException(backend.description() + " - interrupted while waiting for '" + spec.name() + "'");
        }
        if (spec.mode() == Mode.EXCLUSIVE && !inLine) {
            signal.join(this);
            inLine = true;
        }
        if (inLine && !signal.first(this)) {
            signal.await(seen, nanos); // until the line moves, a release, or the deadline
            return;
        }
        long wait = Math.min(nanos, jittered());
        boolean marks = backend.marksWaiters();
        if (spec.mode() == Mode.EXCLUSIVE || marks) {
            long now = backend.ticker.read();
            if (!placed || now - placedAt >= queueLeaseNanos / 3) {
                if (hold(now, marks)) {
                    return; // the lock looked free as our mark landed: try again at once
                }
            }
            if (placed) {
                wait = Math.min(wait, Math.max(0, placedAt + queueLeaseNanos / 3 - backend.ticker.read()));
            }
        }
        signal.await(seen, wait);
    }

    /**
     * Takes or renews what this waiter holds while it waits: a writer's place in the queue, and on
     * PostgreSQL the mark that makes releases notify.
     *
     * @return true if the lock looked free when the mark was written
     */
    private boolean hold(long now, boolean marks) {
        java.time.Duration lease = java.time.Duration.ofNanos(queueLeaseNanos);
        try {
            if (marks) {
                LockStore.Mark m = backend.store.markWaiting(spec.name(), spec.mode(), owner, lease);
                queued = m.queued();
                placed = true;
                placedAt = now;
                return m.free();
            }
            queued = backend.store.queueWriter(spec.name(), owner, lease);
            placed = queued;
            placedAt = now;
        } catch (LockBackendException e) {
            // Only fairness and promptness depend on it; the next try reports a database that stays away.
            log.debug("{} - queueing for '{}' failed: {}", backend.description(), spec.name(), e.getMessage());
        }
        return false;
    }

    /** The next wait between tries: doubling from 10ms up to the poll interval, each drawn from [d/2, d]. */
    private long jittered() {
        long max = TimeUnit.MILLISECONDS.toNanos(backend.pollMillis());
        long d = Math.min(nextWait, max);
        nextWait = Math.min(max, nextWait * 2);
        return d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
    }

    @Override
    public List<HolderInfo> blockers() {
        try {
            dev.interlock.LockInfo info = backend.inspect(spec.name());
            List<HolderInfo> all = new java.util.ArrayList<>(info.holders());
            for (HolderInfo q : info.queued()) {
                if (!q.ownerId().orElse("").equals(owner)) {
                    all.add(q);
                }
            }
            return all;
        } catch (LockBackendException e) {
            return List.of();
        }
    }

    private void leaveLine() {
        if (inLine) {
            inLine = false;
            signal.leave(this);
        }
    }

    @Override
    public void close() {
        leaveLine();
        backend.signals.release(signal);
        if (uncertain && !granted) {
            try {
                backend.store.abandon(spec.name(), owner);
            } catch (LockBackendException e) {
                log.debug("{} - '{}': releasing what a try without an answer may have granted failed (it expires with its lease): {}",
                        backend.description(), spec.name(), e.getMessage());
            }
        }
        if (queued && !granted) {
            try {
                backend.store.leaveQueue(spec.name(), owner);
            } catch (LockBackendException e) {
                log.debug("{} - leaving the queue of '{}' failed (the place expires by itself): {}", backend.description(), spec.name(),
                        e.getMessage());
            } finally {
                backend.signals.bump(key);
            }
        }
    }
}
