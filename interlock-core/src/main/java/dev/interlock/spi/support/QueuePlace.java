package dev.interlock.spi.support;

import dev.interlock.Ticker;
import java.time.Duration;

/**
 * The timing of a waiter's place in a lock's queue: the reservation that keeps new readers out
 * while a writer waits (docs/spi.md, "One try"). The place has a lease of its own, the lock's
 * lease but at most {@link #MAX_LEASE}, so that a waiter that stops (a paused process, a debugger)
 * holds up the others for that long at most; it is renewed once a third of that lease has passed,
 * and given up when the attempt closes without a grant.
 *
 * <p>The backend says how: a {@link Keeper} takes, renews and gives up the place in the
 * storage; this class decides when. An attempt calls {@link #keep()} in its waits (which takes
 * the place the first time, then renews it when due), bounds each wait by
 * {@link #nanosUntilDue()} so the renewal is never late, tells {@link #granted()} when a grant
 * consumed the place, and calls {@link #close()} from {@code Attempt.close()}. A backend whose
 * tries carry the place themselves (a script that queues and tries in one step) calls
 * {@link #kept(boolean)} after each such try instead of renewing separately.
 *
 * <p>One per attempt, used from the attempt's thread: not thread-safe.
 */
public final class QueuePlace implements AutoCloseable {
    /** The longest lease of a place: a stopped waiter holds up the others for this long at most. */
    public static final Duration MAX_LEASE = Duration.ofSeconds(5);

    /** What the backend does in its storage. Failures ({@code LockBackendException}) pass through to the caller. */
    public interface Keeper {
        /**
         * Takes a place, with {@code lease} to run.
         *
         * @return true if the place is held now (false: the storage keeps no place for this waiter)
         */
        boolean take(Duration lease);

        /**
         * Extends the place to {@code lease} from now; by default, takes it again.
         *
         * @return true if the place is still held (false: it was lost, and the next keep takes it again)
         */
        default boolean renew(Duration lease) {
            return take(lease);
        }

        /** Gives the place up (and wakes whoever waits behind it). */
        void giveUp();
    }

    private final Duration lease;
    private final long thirdNanos;
    private final Ticker ticker;
    private final Keeper keeper;
    private boolean held;
    /** The ticker reading when the place was last taken or renewed. */
    private long keptAt;

    /**
     * @param lockLease the lease the waiter asks for its lock; the place's is at most {@link #MAX_LEASE} of it
     * @param ticker the space's monotonic clock ({@code BackendConfig.ticker()})
     */
    public QueuePlace(Duration lockLease, Ticker ticker, Keeper keeper) {
        this.lease = lockLease.compareTo(MAX_LEASE) < 0 ? lockLease : MAX_LEASE;
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("a queue place needs a positive lease, was " + lockLease);
        }
        this.thirdNanos = lease.toNanos() / 3;
        this.ticker = ticker;
        this.keeper = keeper;
    }

    /** The lease of the place: the lock's, at most {@link #MAX_LEASE}. */
    public Duration lease() {
        return lease;
    }

    /** True while this waiter holds a place, as far as it knows. */
    public boolean held() {
        return held;
    }

    /**
     * Takes the place if it is not held, or renews it if a third of its lease has passed since it
     * was taken or last renewed; otherwise does nothing.
     *
     * @return true if the place is held afterwards
     */
    public boolean keep() {
        long now = ticker.read();
        if (!held) {
            held = keeper.take(lease);
            keptAt = now;
        } else if (now - keptAt >= thirdNanos) {
            held = keeper.renew(lease);
            keptAt = now;
        }
        return held;
    }

    /** The backend's own try took or renewed the place ({@code held}: it holds one now); the third counts from now. */
    public void kept(boolean held) {
        this.held = held;
        keptAt = ticker.read();
    }

    /**
     * How long a wait may last before the next {@link #keep()} is due: 0 if it is due now,
     * {@link Long#MAX_VALUE} while no place is held.
     */
    public long nanosUntilDue() {
        if (!held) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, keptAt + thirdNanos - ticker.read());
    }

    /** A grant consumed the place (the storage cleared it with the grant): nothing to give up. */
    public void granted() {
        held = false;
    }

    /** Gives the place up if one is held; at most once. */
    @Override
    public void close() {
        if (held) {
            held = false;
            keeper.giveUp();
        }
    }
}
