package dev.interlock.internal;

import dev.interlock.LockBackendException;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import java.util.concurrent.TimeUnit;

/**
 * The transient backend failures one waiting acquisition rides out (a server paused, restarting,
 * unreachable for a while): a wait must outlast a fault shorter than itself, not give up at its
 * first failed try. Between two failed tries it waits, backing off from {@link #FIRST_PAUSE_MS} to
 * {@link #MAX_PAUSE_MS}, so that a backend that refuses connections at once is not hammered and one
 * that is back is tried again within half a second. It says what the wait went through: a warning
 * when the backend first fails, and one when it answers again.
 *
 * <p>Used by one thread (the one that acquires).
 */
final class WaitFaults {
    private static final Log log = Log.of(WaitFaults.class);
    static final long FIRST_PAUSE_MS = 50;
    static final long MAX_PAUSE_MS = 500;

    private final DefaultLockSpace space;
    private final String name;
    /** Ticker time of the first failure of the current outage; valid while {@link #failing}. */
    private long since;

    private boolean failing;
    private int failures;
    private long pauseMs = FIRST_PAUSE_MS;

    WaitFaults(DefaultLockSpace space, String name) {
        this.space = space;
        this.name = name;
    }

    /** A try failed with {@code e} (transient): remembers it, and says so the first time. */
    void failed(LockBackendException e) {
        failures++;
        if (!failing) {
            failing = true;
            since = space.ticker.read();
            pauseMs = FIRST_PAUSE_MS;
            log.warn(
                    "{} - still waiting for {} through a backend failure: {}",
                    space.description,
                    LockNames.quote(name),
                    reason(e));
        }
    }

    /** The failure's message without the space and the name it starts with (the warning names them already). */
    private String reason(LockBackendException e) {
        String m = String.valueOf(e.getMessage());
        String prefix = space.description + " - " + LockNames.quote(name) + ": ";
        return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
    }

    /** A try was answered (granted or busy): ends the current outage, and says how long it lasted. */
    void answered() {
        if (failing) {
            failing = false;
            log.warn(
                    "{} - the backend answers again after {}ms ({} failed tries); still waiting for {}",
                    space.description,
                    TimeUnit.NANOSECONDS.toMillis(space.ticker.read() - since),
                    failures,
                    LockNames.quote(name));
            failures = 0;
        }
    }

    /** Waits before the next try, at most {@code remainingNanos}. */
    void pause(long remainingNanos) throws InterruptedException {
        long ms = Math.min(pauseMs, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remainingNanos)));
        pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2);
        Thread.sleep(ms);
    }

    /**
     * The failure to report when the wait ran out while the backend still failed: {@code e}, saying
     * how long it did. The outage began at its first failed try, or, when the try that failed last
     * is the first (it took the rest of the wait, as a try against a paused server does), when that
     * try began.
     */
    LockBackendException gaveUp(LockBackendException e, long waitedNanos, long lastTryStart) {
        long failingMs = TimeUnit.NANOSECONDS.toMillis(space.ticker.read() - (failing ? since : lastTryStart));
        return new LockBackendException(
                space.description,
                name,
                e.getMessage() + " (gave up waiting for " + LockNames.quote(name) + " after "
                        + TimeUnit.NANOSECONDS.toMillis(waitedNanos) + "ms; the backend had failed for the last "
                        + failingMs + "ms)",
                e,
                true);
    }
}
