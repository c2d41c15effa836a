package dev.interlock.file.dir;

import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Holder;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LossChannel;
import dev.interlock.spi.support.Log;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A granted {@code dir:} lock or permit. A writer's heartbeat is the {@code g} of its gate name
 * {@code X.<t>.<g>.<holder>}, a reader's (or a permit's) is its {@code B.<t>.<g>}; renewing renames the exact
 * current name to {@code g+1}, so it fails (and the lock is reported lost) once anyone has
 * reclaimed the lock, and a reclaim fails once the holder has renewed. A renewal to a lease
 * shorter than the one acquired with writes that lease into the new name (others judge an entry by
 * the lease written in it, from when they first see it), so a lock kept past close() for a
 * hold-at-least time ends then for everyone. Release also starts with
 * that exact name, so a late release never frees a lock someone else holds. Every renewal also
 * checks that the root path and the lock directory's name still lead to the directories the grant
 * was made in (see {@link DirLockDir#moved()}); on this host, a rename or removal of either is
 * reported lost at once, without waiting for the renewal ({@link DirMoves}).
 */
final class DirGrant implements Grant {
    private static final Log log = Log.of(DirGrant.class);
    private final DirLockDir dir;
    private final boolean writer;
    /** A reader's {@code R} or a permit's {@code P} entry, removed after its heartbeat at release; null for a writer. */
    private final String entry;

    private final long token;
    /** This holder as acquired: its lease is the longest a renewal may give. */
    private final Holder me;
    /** This holder as written in the current name: {@link #me} with the lease of the last renewal. */
    private Holder named;

    private final Instant acquiredAt;
    private long beat;
    private boolean released;
    /** Reports a move of the lock directory seen on this host to the core at once; closed at release. */
    private final DirMoves.Held movesReported;

    DirGrant(
            DirLockDir dir,
            String entry,
            long token,
            long beat,
            Holder me,
            Instant acquiredAt,
            LossChannel lossChannel) {
        this.dir = dir;
        this.writer = entry == null;
        this.entry = entry;
        this.token = token;
        this.beat = beat;
        this.me = me;
        this.named = me;
        this.acquiredAt = acquiredAt;
        this.movesReported = dir.reportMoves(lossChannel);
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    private String current(long g) {
        return name(g, named);
    }

    private String name(long g, Holder h) {
        return writer ? Gate.writer(token, g, h) : Beat.name(token, g, h);
    }

    /** {@link #me} with the lease {@code lease} (rounded up to whole ms), never longer than acquired. */
    private Holder leased(Duration lease) {
        long ms = Math.min(me.leaseMs(), Math.max(1, lease.plusNanos(999_999).toMillis()));
        return ms == named.leaseMs()
                ? named
                : new Holder(
                        ms, me.sinceSec(), me.pid(), me.startTicks(), me.pidNs(), me.bootId(), me.nonce(), me.host());
    }

    /** Others judge this holder by the lease written in its name at acquisition: it cannot be lengthened. */
    @Override
    public Duration maxLease() {
        return Duration.ofMillis(me.leaseMs());
    }

    @Override
    public synchronized void renew(Duration lease) {
        if (released) {
            throw dir.lost("already released");
        }
        // A renamed heartbeat proves the entry is still ours, but not that it is still where others
        // look: the lock directory or the root may have been renamed or replaced under us.
        String moved = dir.moved();
        if (moved != null) {
            throw dir.lost(moved + " (token " + token + "); a new lock of that name may now be held by someone else");
        }
        Holder next = leased(lease);
        for (int i = 0; i < 3; i++) {
            if (dir.cas(current(beat), name(beat + 1, next))) {
                beat++;
                named = next;
                return;
            }
            // The exact name is gone: either a lost reply hid our own earlier rename, or the lock was taken over.
            Optional<Found> found = find();
            if (found.isEmpty()) {
                break;
            }
            beat = found.get().beat();
            named = found.get().holder();
        }
        DirLockDir.Snapshot s = dir.list();
        if (s.gone) {
            throw dir.lost("its lock directory " + dir.dirName + " was removed (token " + token + ")");
        }
        throw dir.lost((writer ? "the gate " : "the heartbeat ") + current(beat) + " was taken over (token " + token
                + "); the lock is now "
                + DirLockBackend.holders(s).stream()
                        .map(h -> h.describe())
                        .reduce((a, b) -> a + "; " + b)
                        .orElse("free"));
    }

    /** Our heartbeat as found in a listing: its count and the holder (with the lease) written in it. */
    private record Found(long beat, Holder holder) {}

    /** Our heartbeat under any count and lease, from a fresh listing. */
    private Optional<Found> find() {
        DirLockDir.Snapshot s = dir.list();
        if (writer) {
            for (Gate g : s.gates) {
                if (g.writer() && g.token() == token && g.holder().nonce().equals(me.nonce())) {
                    return Optional.of(new Found(g.beat(), g.holder()));
                }
            }
        } else {
            Beat b = s.beats.get(token);
            if (b != null) {
                return Optional.of(new Found(b.beat(), b.holder()));
            }
        }
        return Optional.empty();
    }

    private String current(Found f) {
        return name(f.beat(), f.holder());
    }

    @Override
    public void release() {
        releaseIfOwned();
    }

    @Override
    public synchronized boolean releaseIfOwned() {
        if (released) {
            return false;
        }
        released = true;
        try {
            if (writer) {
                String free = Gate.free(token, token, me.nonce());
                if (dir.cas(current(beat), free)) {
                    dir.backend.barging.released(dir.dirName, free);
                    return true;
                }
                Optional<Found> found = find();
                if (found.isPresent()) {
                    return dir.cas(current(found.get()), free);
                }
                log.debug(
                        "{} - '{}' (token {}) was no longer ours at release",
                        dir.backend.description(),
                        dir.name,
                        token);
                return false;
            }
            boolean freed = dir.remove(current(beat));
            if (!freed) {
                Optional<Found> found = find();
                freed = found.isPresent() && dir.remove(current(found.get()));
            }
            DirFaults.step("S4");
            dir.remove(entry);
            return freed;
        } finally {
            movesReported.close();
            dir.close();
            InotifyWatcher.process().flushIdle(); // the watches of our wait, now that the release is out
        }
    }
}
