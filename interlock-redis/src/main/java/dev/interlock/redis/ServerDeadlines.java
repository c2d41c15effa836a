package dev.interlock.redis;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The deadline, in the Redis server's time, after which a request this client sends now must
 * change nothing: the moment the client stops waiting for its answer ({@code timeout}). A request
 * that a paused or overloaded server runs later than that (SIGSTOP, a long fork, a stalled VM)
 * would otherwise grant a lock, or extend one, that nobody uses: the client has already failed
 * the call, and everyone else waits a whole lease for a ghost. The scripts refuse such a request
 * ({@code too_late} in prelude.lua) and answer {@code INTERLOCK-LATE <server time>}.
 *
 * <p>The server's clock is known only from the times its scripts answer with. Each answer gives
 * a lower bound of the offset between the server's clock and this process's monotonic clock
 * (the server read its time before the answer came back), so a deadline computed from it is never
 * later than the moment the client gives up, provided the server's clock does not step back. The
 * latest answer counts, not the largest bound, so that a server whose clock was stepped back is
 * followed. A bound that is too early (a slow answer, drift since the last one) can only refuse a
 * request that was in time: the caller then learns the server's time from the refusal and sends
 * the request once more (see {@link RedisLockStore}).
 *
 * <p>Thread-safe.
 */
final class ServerDeadlines {
    /** No deadline (an application's own client, whose timeout we do not know): the scripts then check nothing. */
    static final ServerDeadlines NONE = new ServerDeadlines(0, System::nanoTime);

    private final long timeoutMs;
    private final LongSupplier nanoTime;
    /** Server ms minus local monotonic ms at the latest answer; valid once {@link #known}. */
    private volatile long offsetMs;

    private volatile boolean known;

    /**
     * @param timeoutMs how long the client waits for an answer (0: no deadline)
     * @param nanoTime the local monotonic clock (real time: it is compared with the server's)
     */
    ServerDeadlines(long timeoutMs, LongSupplier nanoTime) {
        this.timeoutMs = timeoutMs;
        this.nanoTime = nanoTime;
    }

    /** The server answered with its time {@code serverMs} (read just now, on the local clock). */
    void observed(long serverMs) {
        offsetMs = serverMs - localMs();
        known = true;
    }

    /** The deadline for a request sent now, as the scripts take it: server ms, or "" for none (no timeout, or the server's time not yet seen). */
    String forRequestSentNow() {
        if (timeoutMs <= 0 || !known) {
            return "";
        }
        return Long.toString(localMs() + offsetMs + timeoutMs);
    }

    private long localMs() {
        return TimeUnit.NANOSECONDS.toMillis(nanoTime.getAsLong());
    }
}
