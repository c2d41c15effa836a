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
 * <p>Each try is one conditional statement ({@link LockStore#tryAcquire}). An attempt that goes
 * on waiting takes a place at the end of the name's line ({@link LockStore#keepInLine}: a ticket,
 * with a lease of its own of at most {@link #QUEUE_LEASE_MAX_MS}, renewed every third of it while
 * it waits), and its tries then pass only when no live place comes before it (for a reader: no
 * writer's place), so waiters are served in the order they lined up. A waiter that stops
 * (SIGSTOP, a crash) holds the line up for seconds at most: its place runs out. A try that is not
 * in line ({@code tryAcquire}, the first try) comes after everyone in it.
 *
 * <p>The renewal also counts the places before this one. While PostgreSQL notifications arrive,
 * every release (or a waiter leaving the line) wakes every waiter of the name once, so a waiter
 * with k places before it skips its tries until k wake-ups have come, or its next renewal counts
 * again: a release costs the tries of the next one or two waiters, not one per waiting process,
 * and a process far back in the line uses a connection only to renew its place.
 *
 * <p>A writer that goes on waiting also takes the name's one writer-queue place (its own lease of at most
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
    /** Our ticket in the name's line ({@link LockStore#NOT_IN_LINE} until the first wait). */
    private long ticket = LockStore.NOT_IN_LINE;
    /** Whether the line may hold a place of ours (to give up on close). */
    private boolean lined;
    /** Live places before ours when the line was last counted, and the signal's version just before. */
    private int ahead;
    private long versionAtCount;
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
        if (othersGoFirst()) {
            return Optional.empty(); // fewer releases than places before ours since we counted
        }
        LockStore.Outcome o;
        try {
            if (uncertain) {
                backend.store.abandon(spec.name(), owner);
                uncertain = false;
            }
            o = backend.store.tryAcquire(spec.name(), spec.mode(), owner, spec.lease(), ticket);
        } catch (LockBackendException e) {
            uncertain = uncertain || e.isTransient();
            throw e;
        }
        if (o instanceof LockStore.Granted) {
            granted = true;
            queued = false; // a grant clears the queue place and the place in line
            placed = false;
            lined = false;
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
        long now = backend.ticker.read();
        if (!placed || now - placedAt >= queueLeaseNanos / 3) {
            if (hold(now, backend.marksWaiters())) {
                return; // our turn, and the lock looked free as our mark landed: try again at once
            }
        }
        // Waiting for releases that are not ours to take needs no poll: their notifications count them.
        long wait = othersGoFirst() ? nanos : Math.min(nanos, jittered());
        if (placed) {
            wait = Math.min(wait, Math.max(0, placedAt + queueLeaseNanos / 3 - backend.ticker.read()));
        }
        signal.await(seen, wait);
    }

    /**
     * True while notifications arrive and fewer wake-ups came since the line was counted than
     * there were places before ours: a try now would only find someone ahead. A wake-up that was
     * not a release makes a try come early (it finds someone ahead and the next wake-up brings
     * another); a notification lost costs at most the time to the next count.
     */
    private boolean othersGoFirst() {
        return lined && ahead > 0 && backend.notified() && ahead - (signal.version() - versionAtCount) > 0;
    }

    /**
     * Takes or renews what this waiter holds while it waits: its place in the name's line, a
     * writer's place in the queue, and on PostgreSQL the mark that makes releases notify.
     *
     * @return true if no place comes before ours and the lock looked free when the mark was written
     */
    private boolean hold(long now, boolean marks) {
        java.time.Duration lease = java.time.Duration.ofNanos(queueLeaseNanos);
        try {
            long version = signal.version();
            lined = true; // from here on a place may exist, even if the answer is lost
            LockStore.Place place = backend.store.keepInLine(spec.name(), spec.mode(), owner, ticket, lease);
            ticket = place.ticket();
            ahead = place.ahead();
            versionAtCount = version;
            placed = true;
            placedAt = now;
            if (marks) {
                LockStore.Mark m = backend.store.markWaiting(spec.name(), spec.mode(), owner, lease, ticket);
                queued = m.queued();
                return m.free() && ahead == 0;
            }
            if (spec.mode() == Mode.EXCLUSIVE) {
                queued = backend.store.queueWriter(spec.name(), owner, lease, ticket);
            }
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
            for (HolderInfo q : info.queued()) { // the line in order: those before our own place
                if (q.ownerId().orElse("").equals(owner)) {
                    break;
                }
                all.add(q);
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
        if (lined && !granted) {
            try {
                backend.store.leaveLine(spec.name(), owner);
            } catch (LockBackendException e) {
                log.debug("{} - leaving the line of '{}' failed (the place expires by itself): {}", backend.description(), spec.name(),
                        e.getMessage());
            } finally {
                backend.signals.bump(key);
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
