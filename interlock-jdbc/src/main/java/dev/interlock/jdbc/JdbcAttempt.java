package dev.interlock.jdbc;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Mode;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.QueuePlace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One acquisition of a {@code jdbc:} lock.
 *
 * <p>Each try is one conditional statement ({@link LockStore#tryAcquire}). An attempt that goes
 * on waiting takes a place at the end of the name's line ({@link LockStore#keepInLine}: a ticket,
 * with a lease of its own of at most {@link QueuePlace#MAX_LEASE}, renewed every third of it while
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
 * <p>A writer that goes on waiting also takes the name's one writer-queue place (with its place in
 * line, and renewed with it): while it has the place no
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
 * PostgreSQL notification from any process. A missed signal costs one poll interval: the mean
 * wait ({@link Backoff}) starts at 7.5ms and doubles up to 3/4 of the {@code poll} option (while
 * PostgreSQL notifications are being received, of {@link PgListener#FALLBACK_POLL_MS}).
 */
final class JdbcAttempt implements Attempt {
    private static final Log log = Log.of(JdbcAttempt.class);
    /** The mean of the first wait between tries; the waits of earlier versions, drawn from [d/2, d], had this mean. */
    private static final Duration FIRST_MEAN_WAIT = Duration.ofNanos(7_500_000);

    private final JdbcLockBackend backend;
    private final AcquireSpec spec;
    private final String key;
    private final String owner;
    private final Signals.Signal signal;
    private final QueuePlace place;
    private Backoff backoff;
    private long backoffPollMillis;
    private long seen;
    /** Whether this waiter has the name's writer-queue place (as far as it knows). */
    private boolean queued;
    /** Our ticket in the name's line ({@link LockStore#NOT_IN_LINE} until the first wait). */
    private long ticket = LockStore.NOT_IN_LINE;
    /** Live places before ours when the line was last counted, and the signal's version just before. */
    private int ahead;

    private long versionAtCount;
    /** Our turn, and the lock looked free as our mark landed (PostgreSQL): try again at once. */
    private boolean looksFree;

    private boolean granted;
    private boolean inProcessLine;
    /**
     * The last try failed without an answer and its clean-up failed too (LockStore#tryAcquire): a
     * server that ran it late (after a pause) may have committed a grant to this owner that nobody
     * received. The next try, and closing, first release whatever this owner holds; else the
     * waiter would find the lock held by its own ghost, and wait out the whole lease.
     */
    private boolean uncertain;
    /** A plain try found busy asks whether permits hold the name: at the first try, and after each renewal of the place. */
    private boolean askPermits = true;
    /** Where the caller stops waiting ({@link System#nanoTime()}); meaningful if {@link #waitBounded}. */
    private final long waitEnds;
    /** True for a wait with a time limit: its statements end by {@link #waitEnds} (at least a small floor). */
    private final boolean waitBounded;

    JdbcAttempt(JdbcLockBackend backend, AcquireSpec spec) {
        this.backend = backend;
        this.spec = spec;
        this.key = NameKey.of(spec.name());
        this.owner = Owners.check(spec.owner().id());
        this.signal = backend.signals.acquire(key);
        this.place = new QueuePlace(spec.lease(), backend.ticker, new Keeper());
        this.waitBounded = spec.waits() && spec.waitNanos() != Long.MAX_VALUE;
        this.waitEnds = System.nanoTime() + (waitBounded ? spec.waitNanos() : 0);
    }

    /**
     * This thread's statements end by the caller's deadline until the scope closes: on a paused
     * server, a try in flight must not hold an {@code acquire(timeout)} for the whole statement
     * timeout (SqlRunner's floor still lets the clean-up after the deadline through).
     */
    private SqlRunner.Scope bounded() {
        return waitBounded ? SqlRunner.waitEndsAt(waitEnds) : UNBOUNDED;
    }

    private static final SqlRunner.Scope UNBOUNDED = () -> {};

    @Override
    public Optional<Grant> tryAcquire() {
        seen = signal.version();
        if (inProcessLine && !signal.first(this)) {
            return Optional.empty(); // not our turn: the first in line is trying
        }
        if (othersGoFirst()) {
            return Optional.empty(); // fewer releases than places before ours since we counted
        }
        LockStore.Outcome o;
        try (SqlRunner.Scope b = bounded()) {
            if (uncertain) {
                backend.store.abandon(spec.name(), owner);
                uncertain = false;
            }
            o = backend.store.tryAcquire(
                    spec.name(), spec.mode(), spec.limit(), owner, spec.lease(), ticket, askPermits);
            askPermits = false;
        } catch (LockBackendException e) {
            uncertain = uncertain || e.isTransient();
            throw e;
        }
        if (o instanceof LockStore.Granted) {
            granted = true;
            queued = false; // a grant clears the queue place and the place in line
            place.granted();
            leaveProcessLine();
            // A permit is stored as a shared holder's row (LockStore): renewed and released as one.
            Mode stored = permit() ? Mode.SHARED : spec.mode();
            return Optional.of(new JdbcGrant(
                    backend, spec.name(), key, stored, owner, (LockStore.Granted) o, backend.clock.instant()));
        }
        return Optional.empty();
    }

    @Override
    public void await(long nanos) throws InterruptedException {
        if (Thread.interrupted()) {
            throw backend.failures.interruptedWaiting(spec.name());
        }
        // One grant at a time for a lock: the threads of this process wait in turn behind the first;
        // a semaphore may have several permits free, so each of its waiters tries for itself.
        if (spec.mode() == Mode.EXCLUSIVE && !permit() && !inProcessLine) {
            signal.join(this);
            inProcessLine = true;
        }
        if (inProcessLine && !signal.first(this)) {
            signal.await(seen, nanos); // until the line moves, a release, or the deadline
            return;
        }
        looksFree = false;
        try (SqlRunner.Scope b = bounded()) {
            place.keep();
        } catch (LockBackendException e) {
            // Only order and promptness depend on it; the next try reports a database that stays away.
            log.debug("{} - queueing for '{}' failed: {}", backend.description(), spec.name(), e.getMessage());
        }
        if (looksFree) {
            return;
        }
        // Waiting for releases that are not ours to take needs no poll: their notifications count them.
        long wait = othersGoFirst() ? nanos : Math.min(nanos, nextPoll());
        signal.await(seen, Math.min(wait, place.nanosUntilDue()));
    }

    /**
     * True while notifications arrive and fewer wake-ups came since the line was counted than
     * there were places before ours: a try now would only find someone ahead. A wake-up that was
     * not a release makes a try come early (it finds someone ahead and the next wake-up brings
     * another); a notification lost costs at most the time to the next count.
     */
    private boolean othersGoFirst() {
        return place.held() && ahead > 0 && backend.notified() && ahead - (signal.version() - versionAtCount) > 0;
    }

    /** The next wait between tries that no wake-up ends; the law starts again when the poll interval changes (listening or not). */
    private long nextPoll() {
        long poll = backend.pollMillis();
        if (backoff == null || poll != backoffPollMillis) {
            backoffPollMillis = poll;
            backoff = Backoff.exponential(
                    FIRST_MEAN_WAIT, Duration.ofMillis(poll).multipliedBy(3).dividedBy(4));
        }
        return backoff.nextNanos();
    }

    /**
     * What this waiter holds while it waits, taken and renewed together: its place in the name's
     * line, a writer's place in the queue, and on PostgreSQL the mark that makes releases notify.
     */
    private final class Keeper implements QueuePlace.Keeper {
        @Override
        public boolean take(Duration lease) {
            long version = signal.version();
            LockStore.Place p = backend.store.keepInLine(spec.name(), spec.mode(), owner, ticket, lease);
            ticket = p.ticket();
            ahead = p.ahead();
            askPermits = true;
            versionAtCount = version;
            if (backend.marksWaiters()) {
                // A permit's waiter only marks the row wanted: the writer's queue place is a plain lock's.
                Mode marked = permit() ? Mode.SHARED : spec.mode();
                LockStore.Mark m = backend.store.markWaiting(spec.name(), marked, owner, lease, ticket);
                queued = m.queued();
                looksFree = m.free() && ahead == 0;
            } else if (spec.mode() == Mode.EXCLUSIVE && !permit()) {
                queued = backend.store.queueWriter(spec.name(), owner, lease, ticket);
            }
            return true;
        }

        @Override
        public void giveUp() {
            try {
                backend.store.leaveLine(spec.name(), owner);
                if (queued) {
                    backend.store.leaveQueue(spec.name(), owner);
                }
            } catch (LockBackendException e) {
                log.debug(
                        "{} - leaving the line of '{}' failed (the place expires by itself): {}",
                        backend.description(),
                        spec.name(),
                        e.getMessage());
            } finally {
                backend.signals.bump(key);
            }
        }
    }

    @Override
    public List<HolderInfo> blockers() {
        try (SqlRunner.Scope b = bounded()) {
            LockInfo info = backend.inspect(spec.name());
            List<HolderInfo> all = new ArrayList<>(info.holders());
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

    /** One permit of a semaphore rather than a lock. */
    private boolean permit() {
        return spec.limit() > 0;
    }

    private void leaveProcessLine() {
        if (inProcessLine) {
            inProcessLine = false;
            signal.leave(this);
        }
    }

    @Override
    public void close() {
        try (SqlRunner.Scope b = bounded()) {
            closeBounded();
        }
    }

    private void closeBounded() {
        leaveProcessLine();
        backend.signals.release(signal);
        if (uncertain && !granted) {
            try {
                backend.store.abandon(spec.name(), owner);
            } catch (LockBackendException e) {
                log.debug(
                        "{} - '{}': releasing what a try without an answer may have granted failed (it expires with its lease): {}",
                        backend.description(),
                        spec.name(),
                        e.getMessage());
            }
        }
        place.close(); // gives up the place in line and the queue place, unless a grant took them
    }
}
