package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Writers waiting in one JVM form a line: only the first goes to the database, so a release costs
 * one try, not one per waiting thread. Statements are counted as connections borrowed (one per
 * operation), the waits are of zero length, so nothing depends on timing.
 */
class WaitingLineTest {
    private DataSourceTest.CountingDataSource ds;
    private JdbcLockBackend backend;

    @BeforeEach
    void open() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:w" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        ds = new DataSourceTest.CountingDataSource(h2);
        backend = JdbcLockBackend.create(
                ds,
                JdbcOptions.builder()
                        .table("line_locks")
                        .createTable(true)
                        .listen(false)
                        .build());
    }

    @AfterEach
    void close() {
        backend.close();
    }

    private Attempt attempt(Mode mode) {
        return backend.attempt(AcquireSpec.builder("job", mode, Owner.newAcquisition())
                .lease(Duration.ofMinutes(10))
                .build());
    }

    /** Statements run by {@code r}. */
    private int statements(Runnable r) {
        int before = ds.borrowed.get();
        r.run();
        return ds.borrowed.get() - before;
    }

    private static void waitZero(Attempt a) {
        try {
            a.await(0);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void onlyTheFirstWaitingWriter_triesTheDatabase_andTheNextTakesItsTurnWhenItIsGranted() {
        Attempt holder = attempt(Mode.EXCLUSIVE);
        Grant held = holder.tryAcquire().orElseThrow();
        Attempt w1 = attempt(Mode.EXCLUSIVE);
        Attempt w2 = attempt(Mode.EXCLUSIVE);
        Attempt w3 = attempt(Mode.EXCLUSIVE);
        for (Attempt w : new Attempt[] {w1, w2, w3}) {
            assertThat(w.tryAcquire()).isEmpty();
            waitZero(w); // joins the line
        }

        assertThat(statements(() -> assertThat(w2.tryAcquire()).isEmpty()))
                .as("second in line: no statement")
                .isZero();
        assertThat(statements(() -> assertThat(w3.tryAcquire()).isEmpty()))
                .as("third in line: no statement")
                .isZero();
        assertThat(statements(() -> assertThat(w1.tryAcquire()).isEmpty()))
                .as("first in line tries")
                .isEqualTo(1);

        held.release();
        holder.close();
        Grant g1 = w1.tryAcquire().orElseThrow();
        assertThat(statements(() -> assertThat(w2.tryAcquire()).isEmpty()))
                .as("w2 is now first: it tries")
                .isEqualTo(1);
        assertThat(statements(() -> assertThat(w3.tryAcquire()).isEmpty())).isZero();

        w2.close(); // gives up: w3 is next
        assertThat(statements(() -> assertThat(w3.tryAcquire()).isEmpty())).isEqualTo(1);
        g1.release();
        w1.close();
        assertThat(w3.tryAcquire()).isPresent();
        w3.close();
    }

    @Test
    void readers_doNotWaitInTheWritersLine() {
        Attempt holder = attempt(Mode.EXCLUSIVE);
        Grant held = holder.tryAcquire().orElseThrow();
        Attempt w = attempt(Mode.EXCLUSIVE);
        Attempt r = attempt(Mode.SHARED);
        assertThat(w.tryAcquire()).isEmpty();
        waitZero(w);
        assertThat(r.tryAcquire()).isEmpty();
        waitZero(r);
        assertThat(statements(() -> assertThat(r.tryAcquire()).isEmpty()))
                .as("a reader always tries")
                .isEqualTo(1);
        held.release();
        holder.close();
        w.close();
        r.close();
    }
}
