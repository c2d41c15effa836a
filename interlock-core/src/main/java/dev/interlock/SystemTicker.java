package dev.interlock;

/**
 * {@link Ticker#system()}: a class rather than a method reference, whose linking costs a short
 * command's start on JDK 17 (docs/benchmarks.md, "Command-line start-up").
 */
final class SystemTicker implements Ticker {
    static final SystemTicker INSTANCE = new SystemTicker();

    private SystemTicker() {}

    @Override
    public long read() {
        return System.nanoTime();
    }
}
