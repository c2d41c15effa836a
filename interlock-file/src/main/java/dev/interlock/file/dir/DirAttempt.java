package dev.interlock.file.dir;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Holder;
import dev.interlock.file.dir.DirEntries.Reader;
import dev.interlock.file.dir.DirEntries.Waiter;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.NameFilter;
import dev.interlock.file.internal.PercentEncoding;
import dev.interlock.file.internal.Waker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.QueuePlace;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One acquisition of a {@code dir:} lock (see {@link DirLockBackend} and docs/dir-protocol.md).
 *
 * <p>Staleness is judged here, per attempt, on the backend's monotonic ticker: a holder on
 * another host (or in another pid namespace) is stale only once this attempt has seen exactly the
 * same entry name, unrenewed, for the whole lease written in it. A writer that has taken the
 * gate but still waits for readers keeps its gate alive by renaming it every third of its lease.
 *
 * <p>After the first failed try the attempt queues a waiter entry; tries then give way to
 * earlier waiters, so waiters are served roughly in arrival order and a waiting writer keeps new
 * readers out. The entry has its own short lease ({@link QueuePlace#MAX_LEASE} at most), renewed every
 * third of it while the attempt waits, so that a waiter that stops (SIGSTOP, a debugger) holds up
 * a free lock for seconds, not for the lease of the lock it waits for.
 */
final class DirAttempt implements Attempt {
    private static final Log log = Log.of(DirAttempt.class);
    private static final Pattern NOT_HOST = Pattern.compile("[^A-Za-z0-9._-]");
    private final DirLockBackend backend;
    private final DirLockDir dir;
    private final AcquireSpec spec;
    /** Woken by the process's inotify watcher when the lock directory changes; made at the first wait. */
    private Waker waker;

    private InotifyWatcher.Watch watch;
    private boolean watchTried;
    /** The poll, jittered ±50% so that waiters on several hosts do not move in step: the backends' one law. */
    private final Backoff poll;

    private boolean firstTry = true;
    private final Holder me;
    private final long leaseNanos;
    private List<HolderInfo> blockers = List.of();
    private long versionAtTry;
    private boolean granted;

    // A writer that holds the gate while readers drain.
    private String heldName;
    private long heldToken;
    private long heldBeat;
    private long heldBeatAt;

    /** Our waiter entry (made once a try has failed), and the place in the queue that says when to make and renew it. */
    private final DirWaiterEntry queue;

    private final QueuePlace place;

    /** Who of a listing lives: dead and stale holders judged (and removed) on the way. */
    final DirLiveness liveness;

    /** How this attempt takes a permit of a semaphore, and how a plain lock refuses a semaphore's name. */
    private final DirPermits permits;

    DirAttempt(DirLockBackend backend, DirLockDir dir, AcquireSpec spec) {
        this.backend = backend;
        this.dir = dir;
        this.spec = spec;
        this.leaseNanos = spec.lease().toNanos();
        this.poll = Backoff.fixed(Duration.ofNanos(backend.pollNanos));
        Owner o = spec.owner();
        String nonce = DirEntries.HEX.matcher(o.nonce()).matches()
                ? o.nonce()
                : PercentEncoding.sha256Hex(o.nonce()).substring(0, 16);
        String host = NOT_HOST.matcher(o.host()).replaceAll("_");
        if (host.length() > 64) {
            host = host.substring(0, 64);
        }
        if (host.isEmpty()) {
            host = "unknown";
        }
        this.me = new Holder(
                Math.max(1, spec.lease().toMillis()),
                backend.clock.instant().getEpochSecond(),
                o.pid(),
                o.processStart(),
                backend.self.pidNs,
                backend.self.bootId,
                nonce,
                host);
        this.queue = new DirWaiterEntry(backend, dir, spec, me);
        this.place = queue.place();
        this.liveness = new DirLiveness(backend, dir, spec, me);
        this.permits = new DirPermits(this, backend, dir, spec, me);
    }

    @Override
    public Optional<Grant> tryAcquire() {
        // Every change wakes us while we look; what we saw then decides what may wake us after.
        waitFor = null;
        if (watch != null) {
            watch.filter(null);
        }
        versionAtTry = waker != null ? waker.seq() : 0;
        long now = backend.ticker.read();
        boolean fast = firstTry;
        firstTry = false;
        Optional<Grant> g = spec.limit() > 0
                ? permits.tryPermit(now, fast)
                : spec.mode() == Mode.EXCLUSIVE ? tryWriter(now, fast) : tryReader(now, fast);
        if (g.isEmpty() && place.held()) {
            place.keep(); // renewed if a third of its lease has passed
        }
        if (g.isEmpty() && watch != null) {
            watch.filter(waitFor);
        }
        return g;
    }

    // ---------------------------------------------------------------- what wakes a waiter

    /**
     * What can let this attempt in, as the last try saw it (null: anything). A waiter is woken only
     * by changes of that part of the lock directory, not by every rename in it: with 8 processes
     * on one lock, every waiter relisting the directory at every change of anyone's entry cost
     * more than the locking (the herd). The bounded poll still covers what inotify cannot show
     * (another host, a holder going stale).
     */
    private NameFilter waitFor;

    // ---------------------------------------------------------------- writers

    private Optional<Grant> tryWriter(long now, boolean fast) {
        if (heldName != null) {
            boolean renamedNow = false;
            if (now - heldBeatAt >= leaseNanos / 3) {
                renamedNow = renewHeld(now);
            }
            if (heldName != null) {
                DirLockDir.Snapshot s = dir.listSettled();
                if (!s.gate().name().equals(heldName)) {
                    if (dir.exists(heldName)) {
                        return Optional.empty(); // a listing that missed our gate: look again
                    }
                    log.warn(
                            "{} - '{}': our gate {} was taken over while we waited for readers",
                            backend.description(),
                            spec.name(),
                            heldName);
                    heldName = null;
                } else if (drained(s, now)) {
                    if (!renamedNow) {
                        renewHeld(now); // the name observers time us by must be younger than this try
                    }
                    return heldName == null ? Optional.empty() : grantWriter();
                } else {
                    waitFor = DirWakeFilters.READERS;
                    return Optional.empty();
                }
            }
        }
        Gate hinted = fast ? backend.hintedFreeGate(dir.dirName) : null;
        for (int round = 0; round < 8; round++) {
            // Fast path: try the free gate this process saw last, without listing first; fairness is
            // then checked after the rename (and the gate handed back if a waiter came first).
            boolean viaHint = hinted != null;
            DirLockDir.Snapshot s = viaHint ? null : dir.listSettled();
            Gate g = viaHint ? hinted : s.gate();
            hinted = null;
            if (!viaHint) {
                permits.refuseIfSemaphore(s, now);
            }
            if (!viaHint && !mayGo(s)) {
                return Optional.empty();
            }
            String reason = null;
            if (g.writer()) {
                reason = liveness.reclaimable(g, now);
                if (reason == null) {
                    blockers = DirLockBackend.holders(s);
                    waitFor = DirWakeFilters.GATE;
                    return Optional.empty();
                }
            }
            String mine = Gate.writer(g.token() + 1, 0, me);
            if (!dir.cas(g.name(), mine)) {
                continue; // someone changed the gate first; look again
            }
            logTakeover(g, reason);
            heldName = mine;
            heldToken = g.token() + 1;
            heldBeat = 0;
            heldBeatAt = now;
            DirFaults.step("E1");
            DirLockDir.Snapshot s2 = dir.listSettled();
            if (!s2.gate().name().equals(heldName) && !dir.exists(heldName)) {
                heldName = null; // taken over at once (we were paused for a whole lease)
                return Optional.empty();
            }
            try {
                permits.refuseIfSemaphore(s2, now);
            } catch (RuntimeException e) {
                // Permits were taken before our gate: hand it back (as a writer that came and went), refused.
                dir.cas(heldName, Gate.free(heldToken, heldToken, me.nonce()));
                heldName = null;
                throw e;
            }
            boolean inTurn = !viaHint || mayGo(s2);
            if (!inTurn && !backend.barging.barge(dir.dirName, g.name())) {
                // A waiter was there first, and this is not a release of ours taken back (or it was,
                // too many times in a row): hand the gate back (counting as a writer that came and went).
                dir.cas(heldName, Gate.free(heldToken, heldToken, me.nonce()));
                heldName = null;
                return Optional.empty();
            }
            if (inTurn) {
                backend.barging.inTurn(dir.dirName);
            }
            if (s2.gate().name().equals(heldName) && drained(s2, now)) {
                return grantWriter();
            }
            if (s2.gate().name().equals(heldName)) {
                waitFor = DirWakeFilters.READERS;
            }
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * Renames our gate to the next heartbeat; false (and gate forgotten) if it was taken over.
     *
     * @throws LockBackendException if the lock directory was moved or replaced while we waited
     *     (whatever we would be granted here is no longer the lock others take by this name)
     */
    private boolean renewHeld(long now) {
        String moved = dir.moved();
        if (moved != null) {
            throw backend.failures.unreachable(
                    spec.name(), moved + " while we waited for its readers; nothing was granted, try again", null);
        }
        String next = Gate.writer(heldToken, heldBeat + 1, me);
        if (dir.cas(heldName, next)) {
            heldName = next;
            heldBeat++;
            heldBeatAt = now;
            return true;
        }
        log.warn(
                "{} - '{}': our gate {} was taken over while we waited for readers",
                backend.description(),
                spec.name(),
                heldName);
        heldName = null;
        return false;
    }

    private Optional<Grant> grantWriter() {
        granted = true;
        DirGrant grant = new DirGrant(dir, null, heldToken, heldBeat, me, backend.clock.instant(), spec.lossChannel());
        heldName = null;
        return Optional.of(grant);
    }

    /** True if no live reader remains; dead and stale readers are removed on the way. */
    private boolean drained(DirLockDir.Snapshot s, long now) {
        blockers = liveness.liveReaders(s, now);
        return blockers.isEmpty();
    }

    // ---------------------------------------------------------------- readers

    private Optional<Grant> tryReader(long now, boolean fast) {
        Gate hinted = fast ? backend.hintedFreeGate(dir.dirName) : null;
        for (int round = 0; round < 8; round++) {
            boolean viaHint = hinted != null;
            DirLockDir.Snapshot s = viaHint ? null : dir.listSettled();
            Gate g = viaHint ? hinted : s.gate();
            hinted = null;
            if (!viaHint) {
                permits.refuseIfSemaphore(s, now);
            }
            if (!viaHint && !mayGo(s)) {
                return Optional.empty();
            }
            String reason = null;
            if (g.writer()) {
                reason = liveness.reclaimable(g, now);
                if (reason == null) {
                    blockers = DirLockBackend.holders(s);
                    waitFor = DirWakeFilters.GATE;
                    return Optional.empty();
                }
            }
            Gate ours = takeShare(g, reason);
            if (ours == null) {
                continue; // someone changed the gate first; look again
            }
            long t = ours.token();
            long lastWriter = ours.lastWriter();
            DirFaults.step("S1");
            String beat = Beat.name(t, 0, me);
            dir.create(beat);
            DirFaults.step("S2");
            String entry = Reader.name(t, me);
            try {
                dir.link(beat, entry); // if our heartbeat is already gone, the listing below withdraws
            } catch (LockBackendException e) {
                dir.remove(beat); // leave nothing behind (a full or read-only file system)
                throw e;
            }
            DirFaults.step("S3");
            // No writer may have come in between: the gate must still be free with the same last writer.
            DirLockDir.Snapshot s2;
            try {
                s2 = dir.listSettled();
            } catch (LockBackendException e) {
                dir.remove(beat);
                dir.remove(entry);
                throw e;
            }
            try {
                permits.refuseIfSemaphore(s2, now);
            } catch (RuntimeException e) {
                dir.remove(beat);
                dir.remove(entry);
                throw e;
            }
            Gate g2 = s2.gate();
            boolean noWriter =
                    !g2.writer() && g2.lastWriter() == lastWriter && s2.contains(beat) && s2.gates.size() == 1;
            if (noWriter && (!viaHint || mayGo(s2))) {
                return Optional.of(granted(entry, t));
            }
            dir.remove(beat);
            dir.remove(entry);
            if (!noWriter) {
                blockers = DirLockBackend.holders(s2); // else mayGo named the waiter we gave way to
                waitFor = g2.writer() ? DirWakeFilters.GATE : null;
            }
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * A share's token, a reader's or a permit's (docs/dir-protocol.md 4.3 and 4.8): renames gate
     * {@code g} (free, or a writer's that {@code reason} says may be taken over) to a free gate with
     * the next token and the same last writer (a writer's gate names itself as the last writer).
     * Returns that gate, or null if someone changed {@code g} first and the caller must look again.
     */
    Gate takeShare(Gate g, String reason) {
        long t = g.token() + 1;
        String name = Gate.free(t, g.lastWriter(), me.nonce());
        if (!dir.cas(g.name(), name)) {
            return null;
        }
        logTakeover(g, reason);
        return new Gate(name, false, t, g.lastWriter(), 0, me.nonce(), null);
    }

    /** Says that gate {@code g}, stale for {@code reason}, was taken over (nothing if {@code reason} is null). */
    private void logTakeover(Gate g, String reason) {
        if (reason != null) {
            log.warn(
                    "{} - took over '{}' from {} (token {}): {}",
                    backend.description(),
                    spec.name(),
                    g.holder().ownerId(),
                    g.token(),
                    reason);
        }
    }

    // ---------------------------------------------------------------- queue

    /**
     * Fairness: may this attempt try now? Not while an earlier live waiter conflicts with it (for a
     * reader: an earlier writer; for a writer: any earlier waiter). A first try (not yet queued)
     * gives way to every queued writer, and a writer to every queued waiter. Dead and stale waiters
     * are removed. Fairness only: a mistake here delays, it never grants a lock wrongly.
     */
    private boolean mayGo(DirLockDir.Snapshot s) {
        return mayGo(s, null);
    }

    /**
     * {@link #mayGo(DirLockDir.Snapshot)} for a lock ({@code permitsAhead} null) or a permit: then
     * {@code permitsAhead} holds the owners of the other live permits, this adds the earlier permit
     * waiters, and the permit may go only if they leave one of its limit free (served in arrival
     * order: a permit that frees is the earliest waiter's). Other waiters conflict with a permit.
     */
    boolean mayGo(DirLockDir.Snapshot s, Set<String> permitsAhead) {
        String queued = queue.name();
        Waiter mine = queued == null ? null : Waiter.parse(queued).orElse(null);
        long now = backend.ticker.read();
        for (Waiter w : s.waiters) {
            if (mine != null && w.holder().nonce().equals(mine.holder().nonce())) {
                continue;
            }
            boolean earlier = mine == null || w.compareTo(mine) < 0;
            boolean permit = permitsAhead != null;
            boolean conflicts = permit ? !w.permit() : spec.mode() == Mode.EXCLUSIVE || w.mode() == Mode.EXCLUSIVE;
            if (!earlier || !conflicts && !permit) {
                continue;
            }
            String reason = backend.self.provablyDead(w.holder())
                    ? "its process is gone"
                    : liveness.stale(
                            "Q." + w.holder().nonce(), w.name(), w.holder().leaseMs(), now);
            if (reason != null) {
                dir.remove(w.name());
                log.debug(
                        "{} - removed waiter {} of '{}': {}",
                        backend.description(),
                        w.holder().ownerId(),
                        spec.name(),
                        reason);
                continue;
            }
            if (!conflicts) {
                permitsAhead.add(w.holder().nonce()); // an earlier permit waiter: it counts, once
                continue;
            }
            List<HolderInfo> who = new ArrayList<>(DirLockBackend.holders(s));
            who.add(w.info());
            blockers = who;
            waitFor = DirWakeFilters.waiterGone(w.holder().nonce());
            return false;
        }
        if (permitsAhead != null && permitsAhead.size() >= spec.limit()) {
            List<HolderInfo> who = new ArrayList<>(DirLockBackend.holders(s));
            s.waiters.stream().sorted().forEach(w -> who.add(w.info()));
            blocked(who, null); // any permit or place that frees may let us in
            return false;
        }
        return true;
    }

    /** Records what blocks this attempt and which changes of the directory may wake it (null: any). */
    void blocked(List<HolderInfo> who, NameFilter wakeOn) {
        blockers = who;
        waitFor = wakeOn;
    }

    /** The grant of the reader or permit {@code entry} with token {@code t}. */
    Grant granted(String entry, long t) {
        granted = true;
        return new DirGrant(dir, entry, t, 0, me, backend.clock.instant(), spec.lossChannel());
    }

    // ---------------------------------------------------------------- waiting

    @Override
    public void await(long nanos) throws InterruptedException {
        if (!place.held()) {
            place.keep(); // only attempts that wait take a place in the queue
        }
        if (!watchTried) {
            // Watch from now on; a change between the last try and this moment would be missed,
            // so return at once and let the next try look (a spurious return is allowed).
            watchTried = true;
            waker = new Waker();
            watch = backend.watch(dir, waker);
            if (watch != null) {
                return;
            }
        }
        long slice = Math.min(nanos, poll.nextNanos());
        long now = backend.ticker.read();
        if (heldName != null) {
            slice = Math.min(slice, Math.max(TimeUnit.MILLISECONDS.toNanos(1), heldBeatAt + leaseNanos / 3 - now));
        }
        if (place.held()) {
            // Wake in time to renew our place (the next try does), whatever the poll interval.
            slice = Math.min(slice, Math.max(TimeUnit.MILLISECONDS.toNanos(1), place.nanosUntilDue()));
        }
        if (watch != null) {
            waker.awaitChange(versionAtTry, slice);
        } else {
            TimeUnit.NANOSECONDS.sleep(slice);
        }
        if (Thread.interrupted()) {
            throw new InterruptedException(
                    backend.description() + " - interrupted while waiting for " + LockNames.quote(spec.name()));
        }
    }

    /** How many times inotify woke this attempt; for tests. */
    long wakeups() {
        return waker == null ? 0 : waker.seq();
    }

    @Override
    public List<HolderInfo> blockers() {
        return blockers;
    }

    @Override
    public void close() {
        try {
            if (heldName != null) {
                // We took the gate but were never granted: hand it back, counting us as a writer.
                if (!dir.cas(heldName, Gate.free(heldToken, heldToken, me.nonce()))) {
                    log.debug(
                            "{} - '{}': our gate {} was already taken over",
                            backend.description(),
                            spec.name(),
                            heldName);
                }
                heldName = null;
            }
            place.close();
        } catch (LockBackendException e) {
            log.warn(
                    "{} - '{}': cleaning up an attempt failed: {}", backend.description(), spec.name(), e.getMessage());
        } finally {
            if (watch != null) {
                watch.close();
                watch = null;
            }
            if (!granted) {
                dir.close();
            }
        }
    }
}
