package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An acquire that is interrupted while it waits still gives up its place in the line when it
 * closes: the interrupt is kept for the caller, but the clean-up statements run (connections
 * from a URL are limited in number, and waiting for one must not end at the interrupt).
 */
class InterruptedCleanupTest {
    private JdbcLockBackend backend;

    @BeforeEach
    void open() {
        String url = "jdbc:h2:mem:i" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";
        backend = JdbcLockBackend.open(
                url, new Properties(), JdbcOptions.builder().createTable(true).build());
    }

    @AfterEach
    void close() {
        backend.close();
    }

    private Attempt attempt() {
        return backend.attempt(AcquireSpec.builder("job", Mode.EXCLUSIVE, Owner.newAcquisition())
                .lease(Duration.ofMinutes(10))
                .build());
    }

    @Test
    void aWaiterClosedWithTheInterruptFlagSet_leavesTheLine_andKeepsTheFlag() throws Exception {
        Attempt holder = attempt();
        Grant held = holder.tryAcquire().orElseThrow();
        Attempt waiter = attempt();
        assertThat(waiter.tryAcquire()).isEmpty();
        waiter.await(0); // lines up
        assertThat(backend.inspect("job").queued()).hasSize(1);

        Thread.currentThread().interrupt();
        try {
            waiter.close();
            assertThat(Thread.currentThread().isInterrupted())
                    .as("the interrupt is kept")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(backend.inspect("job").queued()).as("its place is gone").isEmpty();
        held.release();
        holder.close();
        Attempt next = attempt();
        assertThat(next.tryAcquire())
                .as("a try not in line is not held up by a place left behind")
                .isPresent();
        next.close();
    }
}
