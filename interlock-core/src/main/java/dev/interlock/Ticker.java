package dev.interlock;

/**
 * A monotonic time source in nanoseconds, injected so that tests can make time pass without
 * sleeping. Only differences between two readings of the same ticker are meaningful.
 *
 * <p>Every lease deadline in Interlock is measured on a ticker, never on a wall clock: a wall
 * clock that jumps by hours changes no lock decision.
 */
@FunctionalInterface
public interface Ticker {
    /** Nanoseconds from an arbitrary, fixed origin. */
    long read();

    /** {@link System#nanoTime()}: CLOCK_MONOTONIC on Linux, comparable across processes of one host. */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }
}
