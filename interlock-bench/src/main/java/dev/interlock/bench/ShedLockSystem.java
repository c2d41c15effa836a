package dev.interlock.bench;

import java.time.Duration;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * Any ShedLock {@link LockProvider} as a {@link LockSystem}. ShedLock skips a busy lock rather
 * than waiting, so a waiter retries: at once ({@code retryMillis} 0, its best case for throughput)
 * or every {@code retryMillis} (how applications wait with it, for the hand-off).
 */
final class ShedLockSystem {
    private ShedLockSystem() {}

    static LockSystem of(String what, LockProvider provider, Duration lease, long retryMillis, Runnable resources) {
        return new LockSystem() {
            @Override
            public String label() {
                return retryMillis == 0
                        ? "ShedLock " + what + ", retry at once"
                        : "ShedLock " + what + ", retry every " + retryMillis + " ms";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    SimpleLock held;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        while (true) {
                            Optional<SimpleLock> l = provider.lock(
                                    new LockConfiguration(ClockProvider.now(), name, lease, Duration.ZERO));
                            if (l.isPresent()) {
                                held = l.get();
                                return;
                            }
                            LockSystem.pause(retryMillis);
                        }
                    }

                    @Override
                    public void release() {
                        held.unlock();
                    }
                };
            }

            @Override
            public void close() {
                resources.run();
            }
        };
    }
}
