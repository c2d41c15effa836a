package dev.interlock.file.dir;

import dev.interlock.LockBackendException;
import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Holder;
import dev.interlock.file.dir.DirEntries.Permit;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Semaphores on {@code dir:} (docs/dir-protocol.md, 4.8): a permit is taken like a reader's
 * share, with a {@code P.<t>.<n>.<holder>} entry in place of the reader's {@code R} entry. The
 * gate's rename gives it its token (one sequence with locks) and keeps writers out as it keeps
 * them from readers; the bound of {@code n} comes from "act, then read": the permit entry is
 * created first, and a listing made after it grants only if fewer than {@code n} other live
 * permit entries are there. Of any {@code n + 1} permits held at once, the one whose entry was
 * created last would have seen the other {@code n}, so at most {@code n} are ever held.
 *
 * <p>The limit is written in every permit entry and compared with every live one, before and
 * after our own entry exists; a plain lock (a writer's gate, a reader's entry) on a name with live
 * permits, and a permit on a name held as a lock, are refused by the same checks. Dead and stale
 * permits are removed as a writer removes readers (exact heartbeat name first, so that of any
 * number of processes judging one stale at once exactly one removes it).
 */
final class DirPermits {
    private final DirAttempt attempt;
    private final DirLockBackend backend;
    private final DirLockDir dir;
    private final AcquireSpec spec;
    private final Holder me;

    DirPermits(DirAttempt attempt, DirLockBackend backend, DirLockDir dir, AcquireSpec spec, Holder me) {
        this.attempt = attempt;
        this.backend = backend;
        this.dir = dir;
        this.spec = spec;
        this.me = me;
    }

    /**
     * The permits of a listing other than ours whose holders live; dead and stale ones (after a
     * whole unrenewed lease of their heartbeat, as readers) are removed on the way.
     */
    List<Permit> liveOthers(DirLockDir.Snapshot s, long now) {
        List<Permit> alive = new ArrayList<>();
        for (Permit p : s.permits) {
            if (p.holder().nonce().equals(me.nonce())) {
                continue;
            }
            if (!attempt.liveness.removedIfGone(
                    "permit", p.name(), p.token(), p.holder(), s.beats.get(p.token()), now)) {
                alive.add(p);
            }
        }
        return alive;
    }

    /** For a plain lock (reader or writer): refuses at once if the name is held as a semaphore. */
    void refuseIfSemaphore(DirLockDir.Snapshot s, long now) {
        List<Permit> live = liveOthers(s, now);
        if (!live.isEmpty()) {
            throw backend.failures.limitMismatch(spec.name(), live.get(0).limit(), 0);
        }
    }

    /**
     * One try for a permit: list, refuse a mismatch, give way to the queue; take a token by renaming
     * the gate, create our heartbeat and permit entry, then list again and count.
     */
    Optional<Grant> tryPermit(long now, boolean fast) {
        int limit = spec.limit();
        // Fast path (as a lock's, 4.2): the first try renames the last free gate seen without listing
        // first, the listing after our entry deciding everything. Only where the last permit granted
        // here saw nobody else: a newcomer must see a queue before its entry exists, or one that tries
        // in a loop could keep a queued waiter's count full with its short-lived entries.
        Gate hinted = fast && backend.quietPermits.contains(dir.dirName) ? backend.hintedFreeGate(dir.dirName) : null;
        for (int round = 0; round < 8; round++) {
            boolean viaHint = hinted != null;
            Gate g = viaHint ? hinted : null;
            hinted = null;
            String reason = null;
            if (!viaHint) {
                DirLockDir.Snapshot s = dir.listSettled();
                g = s.gate();
                reason = g.writer() ? attempt.liveness.reclaimable(g, now) : null;
                if (g.writer() && reason == null) {
                    throw backend.failures.limitMismatch(spec.name(), 0, limit);
                }
                if (!attempt.mayGo(s, aheadOf(s, now))) {
                    backend.quietPermits.remove(dir.dirName);
                    return Optional.empty();
                }
            }
            Gate taken = attempt.takeShare(g, reason);
            if (taken == null) {
                continue; // someone changed the gate first; look again
            }
            long t = taken.token();
            String ours = taken.name();
            DirFaults.step("P1");
            String beat = Beat.name(t, 0, me);
            dir.create(beat);
            String entry = Permit.name(t, limit, me);
            try {
                dir.link(beat, entry); // if our heartbeat is already gone, the listing below withdraws
            } catch (LockBackendException e) {
                dir.remove(beat); // leave nothing behind (a full or read-only file system)
                throw e;
            }
            DirFaults.step("P2");
            try {
                // Act, then read: this listing is made after our entry exists.
                DirLockDir.Snapshot s2 = dir.listSettled();
                Gate g2 = s2.gate();
                if (g2.writer() || !s2.contains(beat)) {
                    // A writer came in (it refuses itself on seeing our entry, or we on seeing it next
                    // try), or our heartbeat was removed as stale (we were paused for a whole lease).
                    withdraw(beat, entry);
                    attempt.blocked(DirLockBackend.holders(s2), g2.writer() ? DirWakeFilters.GATE : null);
                    return Optional.empty();
                }
                if (!g2.name().equals(ours)) {
                    // Someone took a later token since ours, and may have been granted (and even have
                    // released) before this listing: a grant must carry a token greater than every
                    // earlier grant, so ours is void. Withdraw and take a new one.
                    withdraw(beat, entry);
                    continue;
                }
                Set<String> ahead = aheadOf(s2, now);
                if (attempt.mayGo(s2, ahead)) {
                    if (ahead.isEmpty() && s2.waiters.isEmpty() && backend.quietPermits.size() < 100_000) {
                        backend.quietPermits.add(dir.dirName);
                    } else {
                        backend.quietPermits.remove(dir.dirName);
                    }
                    return Optional.of(attempt.granted(entry, t));
                }
            } catch (RuntimeException e) {
                withdraw(beat, entry); // refused, or the file system failed: leave nothing behind
                throw e;
            }
            withdraw(beat, entry);
            backend.quietPermits.remove(dir.dirName);
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * The owners (nonces) of the other live permits of a listing, after refusing at once what
     * disagrees with our limit: a live reader (a plain lock) or a permit of another limit.
     */
    private Set<String> aheadOf(DirLockDir.Snapshot s, long now) {
        if (!attempt.liveness.liveReaders(s, now).isEmpty()) {
            throw backend.failures.limitMismatch(spec.name(), 0, spec.limit());
        }
        Set<String> owners = new LinkedHashSet<>();
        for (Permit p : liveOthers(s, now)) {
            if (p.limit() != spec.limit()) {
                throw backend.failures.limitMismatch(spec.name(), p.limit(), spec.limit());
            }
            owners.add(p.holder().nonce());
        }
        return owners;
    }

    private void withdraw(String beat, String entry) {
        dir.remove(beat);
        dir.remove(entry);
    }
}
