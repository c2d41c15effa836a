package dev.interlock.spi.support;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;

/**
 * The one polling law of Interlock's backends: how long a waiter waits, at most, before it tries
 * again when no wake-up came (a missed notice costs this much latency, never liveness).
 *
 * <p>Each wait is drawn uniformly from {@code [d/2, 3d/2]}, so its mean is {@code d}: a backend
 * polling every {@code p} on average tries as often as one without jitter would, while waiters
 * that a release left in step drift apart. {@code d} starts at {@code initial} and doubles after
 * each wait up to {@code cap} ({@link #exponential}); a {@link #fixed} backoff has
 * {@code initial == cap}. {@link #reset()} starts the doubling again (after a change was seen).
 *
 * <p>One per attempt: not thread-safe. A backend that polled with another law kept its rate by
 * passing the mean it had as {@code d}.
 */
public final class Backoff {
    private final long initialNanos;
    private final long capNanos;
    /** Draws a number in {@code [0, bound]} for a bound: ThreadLocalRandom, or a test's. */
    private final LongUnaryOperator random;

    private long next;

    private Backoff(long initialNanos, long capNanos, LongUnaryOperator random) {
        if (initialNanos <= 0 || capNanos < initialNanos) {
            throw new IllegalArgumentException("a backoff needs 0 < initial <= cap, was initial "
                    + Duration.ofNanos(initialNanos) + " and cap " + Duration.ofNanos(capNanos));
        }
        this.initialNanos = initialNanos;
        this.capNanos = capNanos;
        this.random = random;
        this.next = initialNanos;
    }

    /** Every wait drawn from {@code [poll/2, 3 poll/2]}. */
    public static Backoff fixed(Duration poll) {
        return exponential(poll, poll);
    }

    /** Waits whose mean starts at {@code initial} and doubles after each up to {@code cap}. */
    public static Backoff exponential(Duration initial, Duration cap) {
        return new Backoff(
                initial.toNanos(),
                cap.toNanos(),
                bound -> ThreadLocalRandom.current().nextLong(bound + 1));
    }

    /**
     * The same law with the draws of {@code random} (given a bound, a number from 0 to it
     * inclusive), for tests that must know each wait.
     */
    public Backoff withRandom(LongUnaryOperator random) {
        return new Backoff(initialNanos, capNanos, random);
    }

    /** The next wait in nanoseconds, from {@code [d/2, 3d/2]} for the current mean {@code d}, which then doubles up to the cap. */
    public long nextNanos() {
        long d = next;
        next = Math.min(capNanos, d > capNanos / 2 ? capNanos : d * 2);
        return d / 2 + random.applyAsLong(d);
    }

    /** Starts again from the initial mean. */
    public void reset() {
        next = initialNanos;
    }

    /** The largest mean, reached after the doubling. */
    public long capNanos() {
        return capNanos;
    }
}
