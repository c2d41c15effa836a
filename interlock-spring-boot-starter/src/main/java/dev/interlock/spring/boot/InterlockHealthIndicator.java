package dev.interlock.spring.boot;

import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import java.util.List;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when the lock space answers a read: {@link LockSpace#list()}, which reaches the backend (the
 * table, the Redis server, the lock directory) and proves it usable, yet takes no lock that
 * others could need. DOWN, with the backend's message as the reason, when the read fails. The
 * details show the space's URI (passwords masked by the space), how many locks it lists and how
 * many of them are held.
 */
class InterlockHealthIndicator extends AbstractHealthIndicator {
    private final LockSpace space;

    InterlockHealthIndicator(LockSpace space) {
        super(e -> "Interlock lock space " + space.uri() + " is not usable");
        this.space = space;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("uri", space.uri());
        List<LockInfo> locks;
        try {
            locks = space.list();
        } catch (RuntimeException e) {
            // The backends' messages name the space with its password masked; no stack trace in the health JSON.
            builder.down()
                    .withDetail("reason", e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
            return;
        }
        builder.up()
                .withDetail("locks", locks.size())
                .withDetail("held", locks.stream().filter(l -> !l.isFree()).count());
    }
}
