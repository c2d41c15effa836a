package dev.interlock.shedlock;

import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.Timing;
import java.time.Duration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * The contract on a backend that judges expiry by its server's clock ({@code jdbc:}, {@code redis:}):
 * fake time moves this process's leases (a lease running out is given up by its holder), but a
 * lock kept after unlock for its {@code lockAtLeastFor} frees on the server's real clock, so those
 * checks wait for it, bounded; {@code lockAtMostFor} is short to keep that wait short.
 */
abstract class ServerClockShedLockContract extends ShedLockProviderContract {
    @Override
    protected Duration d() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected void assertFreedAfter(Duration wait, String name) {
        timer.advance(wait);
        await().atMost(Timing.seconds(15)).pollInterval(Duration.ofMillis(50)).until(() -> {
            SimpleLock l = b.lock(cfg(name)).orElse(null);
            if (l != null) {
                l.unlock();
            }
            return l != null;
        });
    }
}
