package dev.interlock.file.dir;

import dev.interlock.HolderInfo;
import dev.interlock.Mode;
import dev.interlock.file.dir.DirEntries.Beat;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Holder;
import dev.interlock.file.dir.DirEntries.Reader;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.support.Log;
import java.util.ArrayList;
import java.util.List;

/**
 * Who of a listing still holds, for one {@link DirAttempt} (docs/dir-protocol.md, section 5): a
 * holder is dead at once with proof on this host and pid namespace, otherwise stale only once this
 * attempt has seen exactly the same name, unrenewed, for the whole lease written in it. Dead and
 * stale readers and permits are removed on the way, each by one atomic step naming the exact
 * state seen.
 */
final class DirLiveness {
    /** The attempt's logger: judging holders is part of the attempt, and its messages keep the logger name they had. */
    private static final Log log = Log.of(DirAttempt.class);

    private final DirLockBackend backend;
    private final DirLockDir dir;
    private final AcquireSpec spec;
    private final Holder me;

    DirLiveness(DirLockBackend backend, DirLockDir dir, AcquireSpec spec, Holder me) {
        this.backend = backend;
        this.dir = dir;
        this.spec = spec;
        this.me = me;
    }

    /** The readers of a listing whose holders live; dead and stale readers (and stray heartbeats) are removed on the way. */
    List<HolderInfo> liveReaders(DirLockDir.Snapshot s, long now) {
        List<HolderInfo> alive = new ArrayList<>();
        for (Reader r : s.readers) {
            if (!removedIfGone("reader", r.name(), r.token(), r.holder(), s.beats.get(r.token()), now)) {
                alive.add(r.holder().info(Mode.SHARED, r.token()));
            }
        }
        // Heartbeats without a reader or permit entry: one that crashed between its two creates (or a
        // listing that raced with one). Removed once their own holder is proven dead or stale.
        for (Beat b : s.beats.values()) {
            if (s.readers.stream().noneMatch(r -> r.token() == b.token())
                    && s.permits.stream().noneMatch(p -> p.token() == b.token())) {
                String reason = backend.self.provablyDead(b.holder())
                        ? "its process is gone"
                        : stale("B." + b.token(), b.name(), b.holder().leaseMs(), now);
                if (reason != null && dir.remove(b.name())) {
                    log.debug(
                            "{} - removed stray heartbeat {} of '{}': {}",
                            backend.description(),
                            b.name(),
                            spec.name(),
                            reason);
                }
            }
        }
        return alive;
    }

    /**
     * Removes the {@code kind} entry {@code entry} (a reader's or a permit's, with token {@code token}
     * and heartbeat {@code b}, null if none) if its process is provably gone or its heartbeat was
     * seen unrenewed for a whole lease: the exact heartbeat first, so that of several processes
     * judging it at once exactly one removes it, and none removes a heartbeat renewed meanwhile.
     * True if it is gone; false if its holder lives (or renewed meanwhile).
     */
    boolean removedIfGone(String kind, String entry, long token, Holder holder, Beat b, long now) {
        String state = b == null ? "none" : b.name();
        // A heartbeat renewed to a shorter lease (kept past close for a hold-at-least time) carries it.
        long leaseMs = b == null
                ? holder.leaseMs()
                : Math.min(holder.leaseMs(), b.holder().leaseMs());
        String reason = backend.self.provablyDead(holder)
                ? "its process is gone"
                : stale(entry.charAt(0) + "." + token, state, leaseMs, now);
        if (reason == null || b != null && !dir.remove(b.name())) {
            return false;
        }
        dir.remove(entry);
        log.warn(
                "{} - removed {} {} of '{}' (token {}): {}",
                backend.description(),
                kind,
                holder.ownerId(),
                spec.name(),
                token,
                reason);
        return true;
    }

    /**
     * Why the writer on gate {@code g} may be replaced, or null if it may not: its process is
     * provably gone (same host and pid namespace), or this attempt has seen the same gate name,
     * unrenewed, for the whole lease written in it.
     */
    String reclaimable(Gate g, long now) {
        if (g.holder().nonce().equals(me.nonce())) {
            return null;
        }
        if (backend.self.provablyDead(g.holder())) {
            return "its process " + g.holder().pid() + " is gone";
        }
        return stale("X." + g.token(), g.name(), g.holder().leaseMs(), now);
    }

    String stale(String key, String state, long leaseMs, long now) {
        return backend.stale(dir.dirName + "/" + key, state, leaseMs, now);
    }
}
