package dev.interlock.testkit;

import java.time.Duration;

/** Test timeouts scaled by {@code -Dinterlock.test.timeScale=N} for slow machines (like Curator's Timing). */
public final class Timing {
    private Timing() {}

    public static double scale() {
        try {
            return Math.max(1.0, Double.parseDouble(System.getProperty("interlock.test.timeScale", "1")));
        } catch (NumberFormatException e) {
            return 1.0;
        }
    }

    /** {@code d} times the scale. */
    public static Duration scaled(Duration d) {
        return Duration.ofNanos((long) (d.toNanos() * scale()));
    }

    public static Duration seconds(long s) {
        return scaled(Duration.ofSeconds(s));
    }
}
