package dev.interlock.mem;

import dev.interlock.spi.support.BackendFailures;
import java.util.concurrent.CountDownLatch;

/**
 * The failures a test asks of a {@link MemoryBackend} ({@link MemoryBackend#cut()},
 * {@link MemoryBackend#pause()}): kept apart from the backend so that the backend reads as the
 * SPI's reference, with one {@link #enter} at the start of each call.
 */
final class MemoryFaults {
    private final BackendFailures failures;
    private volatile boolean cut;
    private volatile CountDownLatch paused;
    private volatile String pausedPrefix = "";

    MemoryFaults(BackendFailures failures) {
        this.failures = failures;
    }

    /** Every call into the backend passes here: it fails or hangs if a test asked for it. */
    void enter(String what, String name) {
        CountDownLatch p = paused;
        if (p != null && (name == null || name.startsWith(pausedPrefix))) {
            try {
                p.await();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw failures.unreachable(name, what + " interrupted while the backend was paused", ie);
            }
        }
        if (cut) {
            throw failures.unreachable(name, what + " failed: the backend is cut off", null);
        }
    }

    /** Makes every call fail as an unreachable server would (a transient LockBackendException), until {@link #restore()}. */
    void cut() {
        cut = true;
    }

    /** Undoes {@link #cut()} and {@link #pause(String)}. */
    synchronized void restore() {
        cut = false;
        CountDownLatch p = paused;
        paused = null;
        if (p != null) {
            p.countDown();
        }
    }

    /** Makes the calls about names starting with {@code prefix} hang until {@link #restore()}. */
    synchronized void pause(String prefix) {
        pausedPrefix = prefix;
        if (paused == null) {
            paused = new CountDownLatch(1);
        }
    }
}
