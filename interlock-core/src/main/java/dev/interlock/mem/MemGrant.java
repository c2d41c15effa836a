package dev.interlock.mem;

import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.time.Instant;

/** A granted lock of {@link MemoryBackend}; every call checks that the holder entry is still this grant's. */
final class MemGrant implements Grant {
    private final MemoryBackend backend;
    /** The name's entry: never dropped once a token was issued. */
    final Entry entry;

    final Holder mine;
    final AcquireSpec spec;

    MemGrant(MemoryBackend backend, Entry entry, Holder mine) {
        this.backend = backend;
        this.entry = entry;
        this.mine = mine;
        this.spec = mine.spec;
        backend.channels.put(this, spec.lossChannel());
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
        renew(lease, Long.MAX_VALUE);
    }

    @Override
    public void renew(Duration lease, long timeoutNanos) {
        backend.calls.renewals.increment();
        backend.faults.enter("renew", spec.name());
        Entry e = entry;
        e.lock.lock();
        try {
            backend.expire(e);
            if (e.holders.get(spec.owner().id()) != mine) {
                throw backend.failures.lost(
                        spec.name(),
                        mine.token,
                        "no longer held by " + spec.owner().id() + " (its lease ran out, or it was broken)",
                        null);
            }
            mine.expires = backend.ticker.read() + lease.toNanos();
        } finally {
            e.lock.unlock();
        }
    }

    @Override
    public void release() {
        releaseIfOwned();
    }

    @Override
    public boolean releaseIfOwned() {
        backend.calls.releases.increment();
        backend.channels.remove(this);
        backend.faults.enter("release", spec.name());
        Entry e = entry;
        e.lock.lock();
        try {
            if (e.holders.get(spec.owner().id()) == mine) {
                e.holders.remove(spec.owner().id());
                e.changed();
                return true;
            }
            return false;
        } finally {
            e.lock.unlock();
        }
    }
}
