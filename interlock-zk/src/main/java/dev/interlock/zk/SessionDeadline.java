package dev.interlock.zk;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The holder's side of a ZooKeeper session's life, on its own monotonic clock: the rule that
 * declares a session's locks lost before the servers can have expired it.
 *
 * <p>A server expires a session when it has heard nothing from the client for the negotiated
 * timeout T (rounded up to its next tick, never down). Every request that succeeds was received,
 * and so touched the session, after the client sent it; so the session cannot expire before
 * {@code sent + T}, where {@code sent} is the client's clock just before it sent the last request
 * that came back. The holder declares its locks lost a third of T before that: at
 * {@code sent + 2T/3}. The third is the holder's time to stop (the command of {@code interlock run}
 * gets SIGTERM, then SIGKILL) and covers clock-rate differences between the client and the servers.
 * docs/zookeeper.md derives it.
 *
 * <p>Thread-safe: {@link #confirmed} may be called from any thread, with any order of send times.
 */
final class SessionDeadline {
    private final long timeoutNanos;
    private final AtomicLong confirmedSend;

    /**
     * @param timeoutNanos the negotiated session timeout
     * @param startedAt the client's clock just before it asked for the session
     */
    SessionDeadline(long timeoutNanos, long startedAt) {
        this.timeoutNanos = timeoutNanos;
        this.confirmedSend = new AtomicLong(startedAt);
    }

    /** A request sent at {@code sentAt} (the ticker before sending) came back successful. */
    void confirmed(long sentAt) {
        confirmedSend.accumulateAndGet(sentAt, (a, b) -> b - a > 0 ? b : a);
    }

    /** The margin: a third of the session timeout. */
    long marginNanos() {
        return timeoutNanos / 3;
    }

    /** The earliest time the servers could expire the session, as far as this client can know. */
    long earliestExpiry() {
        return confirmedSend.get() + timeoutNanos;
    }

    /** When the holder declares the session's locks lost. */
    long lossPoint() {
        return earliestExpiry() - marginNanos();
    }

    /** True from the loss point on. */
    boolean pastLossPoint(long now) {
        return now - lossPoint() >= 0;
    }

    long timeoutNanos() {
        return timeoutNanos;
    }

    /** How long ago (at {@code now}) the last confirmed request was sent. */
    long silenceNanos(long now) {
        return now - confirmedSend.get();
    }
}
