package dev.interlock.file.dir;

import dev.interlock.LockBackendException;
import dev.interlock.file.dir.DirEntries.Gate;
import dev.interlock.file.dir.DirEntries.Holder;
import dev.interlock.file.dir.DirEntries.Waiter;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.QueuePlace;
import java.time.Duration;

/**
 * The waiter entry of one {@link DirAttempt} in its lock directory, once a try has failed: its
 * name is kept by the attempt's {@link QueuePlace} (the when), made and renamed here (the how).
 * The entry carries the place's short lease, not the lock's, so that a waiter that stops holds up
 * a free lock only that long (see docs/dir-protocol.md).
 */
final class DirWaiterEntry implements QueuePlace.Keeper {
    /** The attempt's logger: the entry is part of the attempt, and its messages keep the logger name they had. */
    private static final Log log = Log.of(DirAttempt.class);

    private final DirLockBackend backend;
    private final DirLockDir dir;
    private final AcquireSpec spec;
    private final QueuePlace place;
    /** The attempt's holder with the queue lease: the holder field of our waiter entry. */
    private final Holder meQueued;

    private String queued;
    private long queuedBeat;
    private long queuedSeenToken;
    private long queuedMs;

    DirWaiterEntry(DirLockBackend backend, DirLockDir dir, AcquireSpec spec, Holder me) {
        this.backend = backend;
        this.dir = dir;
        this.spec = spec;
        this.place = new QueuePlace(Duration.ofMillis(me.leaseMs()), backend.ticker, this);
        this.meQueued = new Holder(
                place.lease().toMillis(),
                me.sinceSec(),
                me.pid(),
                me.startTicks(),
                me.pidNs(),
                me.bootId(),
                me.nonce(),
                me.host());
    }

    /** The attempt's place in the queue, which takes, renews and gives up this entry. */
    QueuePlace place() {
        return place;
    }

    /** The entry's name now; null while the attempt is not queued. */
    String name() {
        return queued;
    }

    /** Creates our waiter entry; false if it cannot be made (we then wait unqueued, and try again at the next wait). */
    @Override
    public boolean take(Duration lease) {
        DirLockDir.Snapshot s = dir.list();
        Gate g = s.gate();
        queuedSeenToken = g == null ? 0 : g.token();
        queuedMs = backend.clock.millis();
        queuedBeat = 0;
        String name = Waiter.name(queuedSeenToken, queuedMs, spec.mode(), spec.limit() > 0, 0, meQueued);
        try {
            dir.create(name);
        } catch (LockBackendException e) {
            log.debug(
                    "{} - '{}': cannot queue ({}); waiting unqueued",
                    backend.description(),
                    spec.name(),
                    e.getMessage());
            return false;
        }
        queued = name;
        DirFaults.step("Q1");
        return true;
    }

    /** Renames our waiter entry to its next beat; false if it was removed as stale (we queue again at the next wait). */
    @Override
    public boolean renew(Duration lease) {
        String next = Waiter.name(queuedSeenToken, queuedMs, spec.mode(), spec.limit() > 0, queuedBeat + 1, meQueued);
        if (dir.cas(queued, next)) {
            queued = next;
            queuedBeat++;
            return true;
        }
        queued = null;
        return false;
    }

    @Override
    public void giveUp() {
        dir.remove(queued);
        queued = null;
    }
}
