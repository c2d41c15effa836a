package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A permit try on PostgreSQL is the name's row lock and the decision sent together: one round
 * trip, as a lock's try, and one transaction in which the row lock comes first (docs/jdbc.md,
 * "Semaphores"), on pgjdbc's default (extended) protocol; with its simple protocol, which sends
 * the two statements as two transactions, still one transaction.
 */
class PostgresPermitTripIT {
    /**
     * Counts the Syncs pgjdbc sends from the test's thread: each one ends a round trip (and, in
     * autocommit mode, the implicit transaction of the statements sent before it).
     */
    private static final class Syncs extends Handler implements AutoCloseable {
        /** Held here: java.util.logging keeps only weak references to its loggers. */
        private final Logger driver = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

        private final Level before = driver.getLevel();
        private final long thread = Thread.currentThread().getId();
        private final AtomicInteger count = new AtomicInteger();

        Syncs() {
            driver.setLevel(Level.FINEST);
            driver.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            if (r.getLongThreadID() == thread
                    && r.getMessage() != null
                    && r.getMessage().contains("FE=> Sync")) {
                count.incrementAndGet();
            }
        }

        /** The Syncs sent while {@code r} ran. */
        int during(Runnable r) {
            int at = count.get();
            r.run();
            return count.get() - at;
        }

        @Override
        public void flush() {}

        @Override
        public void close() {
            driver.removeHandler(this);
            driver.setLevel(before);
        }
    }

    private static String url(String mode, String table) {
        return TestServers.withOptions(
                TestServers.postgresUrl(), "table=" + table + "&create=true&preferQueryMode=" + mode);
    }

    /** On pgjdbc's default protocol (with {@code preferQueryMode=simple} a permit's try is an explicit transaction). */
    @Test
    void aPermitsGrantAndRelease_costTheRoundTripsOfALocks() {
        try (LockSpace space = Interlock.open(url("extended", TestServers.table()));
                Syncs syncs = new Syncs()) {
            // The first use of each name, then one more grant each, as a lock's are counted.
            int[] permit = new int[2];
            int[] lock = new int[2];
            int[] permitRelease = new int[2];
            int[] lockRelease = new int[2];
            for (int i = 0; i < 2; i++) {
                Lease[] held = new Lease[1];
                permit[i] = syncs.during(() ->
                        held[0] = space.lock("permit").limit(3).tryAcquire().orElseThrow());
                permitRelease[i] = syncs.during(() -> held[0].close());
                lock[i] = syncs.during(
                        () -> held[0] = space.lock("lock").tryAcquire().orElseThrow());
                lockRelease[i] = syncs.during(() -> held[0].close());
            }
            assertThat(lock).as("a lock's grant: one statement").containsExactly(1, 1);
            assertThat(permit)
                    .as("a permit's grant: the first use of its name (the all-back statement, then the full"
                            + " decision), then with every permit back")
                    .containsExactly(2, 1);
            assertThat(lockRelease).as("a lock's release").containsExactly(1, 1);
            assertThat(permitRelease).as("a permit's release").containsExactly(1, 1);
        }
    }

    /**
     * A trigger logs each change of the lock table's rows with its transaction: every grant (the
     * token raised) decided by the full decision must follow its row lock (the token unchanged, or
     * the row made) in the same transaction; a row made with its first grant (token 1) is its own
     * row lock. Were the two statements committed apart, another grant could come between the
     * row lock and the decision's snapshot, or the decision run with no row lock at all (as it
     * does at first with {@code preferQueryMode=simple}, and then grants nothing). A grant of a
     * name whose permits were all back ({@code readers} 0 before it) is one conditional UPDATE
     * that decides on the row alone, its own row lock: the first of each round here, after the
     * name's first (the round's last try, by the full decision, has seen the name free again).
     */
    @ParameterizedTest
    @ValueSource(strings = {"extended", "simple"})
    void everyGrant_isDecidedInTheTransactionOfItsRowLock_afterIt(String mode) throws SQLException {
        String table = TestServers.table();
        try (LockSpace space = Interlock.open(url(mode, table))) {
            space.lock("tables").tryAcquire().orElseThrow().close(); // the first lock makes the tables
            String base = JdbcUrls.split(TestServers.postgresUrl()).driverUrl();
            TestServers.execute(
                    base,
                    "CREATE TABLE " + table + "_log (seq BIGSERIAL PRIMARY KEY, xid BIGINT NOT NULL,"
                            + " old_token BIGINT, new_token BIGINT NOT NULL, all_back BOOLEAN NOT NULL)",
                    "CREATE FUNCTION " + table + "_logged() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                            + " INSERT INTO " + table + "_log (xid, old_token, new_token, all_back) VALUES"
                            + " (txid_current(), CASE WHEN TG_OP = 'UPDATE' THEN OLD.token END, NEW.token,"
                            + " TG_OP = 'UPDATE' AND COALESCE(OLD.permits > 0 AND OLD.readers = 0, FALSE));"
                            + " RETURN NEW; END $$",
                    "CREATE TRIGGER " + table + "_logging AFTER INSERT OR UPDATE ON " + table
                            + " FOR EACH ROW EXECUTE FUNCTION " + table + "_logged()");
            // More tries than pgjdbc's prepareThreshold (5): its server-side statements are described.
            int grants = 12;
            for (int i = 0; i < grants; i++) {
                Lease first = space.lock("tripped").limit(2).tryAcquire().orElseThrow();
                Lease second = space.lock("tripped").limit(2).tryAcquire().orElseThrow();
                assertThat(space.lock("tripped").limit(2).tryAcquire())
                        .as("a third of 2")
                        .isEmpty();
                first.close();
                second.close();
                // The busy try saw the name held, so this space's next try skips the all-back
                // statement: this one, by the full decision, sees it free again.
                space.lock("tripped").limit(2).tryAcquire().orElseThrow().close();
            }
            try (Connection c = DriverManager.getConnection(base);
                    Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(*),"
                            + " count(*) FILTER (WHERE g.all_back AND NOT g.after_row_lock),"
                            + " count(*) FILTER (WHERE NOT g.all_back AND NOT g.after_row_lock"
                            + " AND g.old_token IS NOT NULL)"
                            + " FROM (SELECT x.*, EXISTS (SELECT 1 FROM " + table + "_log l WHERE l.xid = x.xid"
                            + " AND l.seq < x.seq AND l.new_token = x.old_token) AS after_row_lock"
                            + " FROM " + table + "_log x) g WHERE g.new_token = g.old_token + 1"
                            + " OR (g.old_token IS NULL AND g.new_token > 0)")) {
                rs.next();
                assertThat(rs.getLong(1)).as("grants logged").isEqualTo(3L * grants);
                assertThat(rs.getLong(2))
                        .as("grants of a name whose permits were all back, alone in their transaction")
                        .isEqualTo(grants - 1);
                assertThat(rs.getLong(3))
                        .as("other grants without their row lock before them in their transaction")
                        .isZero();
            }
        }
    }
}
