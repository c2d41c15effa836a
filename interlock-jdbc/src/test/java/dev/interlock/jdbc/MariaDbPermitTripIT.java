package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LimitMismatchException;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * A permit's try and release on MariaDB are one text of statements each, one round trip, as a
 * lock's are one statement (docs/jdbc.md, "Semaphores"); on connections that refuse texts of
 * several statements (no {@code allowMultiQueries}), the standard transactions, found out once.
 */
class MariaDbPermitTripIT {
    /**
     * MariaDB Connector/J behind a DataSource that counts the round trips of the test's thread:
     * each execution of a statement, each commit and rollback, and each change of autocommit mode
     * (the driver sends {@code set autocommit} only when the mode changes).
     */
    private static final class RoundTrips extends WrappingDataSource {
        private final MariaDbDataSource target;
        private final long thread = Thread.currentThread().getId();
        private final AtomicInteger count = new AtomicInteger();

        RoundTrips(String url) throws SQLException {
            target = new MariaDbDataSource(JdbcUrls.split(url).driverUrl());
        }

        /** The round trips sent while {@code r} ran. */
        int during(Runnable r) {
            int at = count.get();
            r.run();
            return count.get() - at;
        }

        private void counted() {
            if (Thread.currentThread().getId() == thread) {
                count.incrementAndGet();
            }
        }

        @Override
        public Connection getConnection() throws SQLException {
            Connection c = target.getConnection();
            return (Connection) Proxy.newProxyInstance(
                    getClass().getClassLoader(), new Class<?>[] {Connection.class}, (p, m, args) -> {
                        String name = m.getName();
                        if (name.equals("commit")
                                || name.equals("rollback")
                                || (name.equals("setAutoCommit") && c.getAutoCommit() != (Boolean) args[0])) {
                            counted();
                        }
                        Object result = invoke(m, c, args);
                        return result instanceof Statement s ? counting(s) : result;
                    });
        }

        private Object counting(Statement s) {
            Class<?> type = s instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
            return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
                if (m.getName().startsWith("execute")) {
                    counted();
                }
                return invoke(m, s, args);
            });
        }
    }

    private static LockSpace open(DataSource ds) {
        return JdbcLockSpaces.open(
                ds,
                JdbcOptions.builder()
                        .table(TestServers.table())
                        .createTable(true)
                        .build());
    }

    @Test
    void aPermitsGrantAndRelease_costTheRoundTripsOfALocks_andABusyTryThree() throws SQLException {
        RoundTrips trips = new RoundTrips(TestServers.withOptions(TestServers.mariadbUrl(), "allowMultiQueries=true"));
        try (LockSpace space = open(trips)) {
            space.lock("tables").tryAcquire().orElseThrow().close(); // the first lock checks the tables
            // The first use of each name, then one more grant each, as a lock's are counted.
            int[] permit = new int[2];
            int[] permitRelease = new int[2];
            int[] lock = new int[2];
            int[] lockRelease = new int[2];
            for (int i = 0; i < 2; i++) {
                Lease[] held = new Lease[1];
                permit[i] = trips.during(() ->
                        held[0] = space.lock("permit").limit(1).tryAcquire().orElseThrow());
                permitRelease[i] = trips.during(() -> held[0].close());
                lock[i] = trips.during(
                        () -> held[0] = space.lock("lock").tryAcquire().orElseThrow());
                lockRelease[i] = trips.during(() -> held[0].close());
            }
            assertThat(lock)
                    .as("a lock's grant: the first use of its name and then")
                    .containsExactly(2, 1);
            assertThat(lockRelease).as("a lock's release").containsExactly(1, 1);
            assertThat(permit)
                    .as("a permit's grant: the first use of its name (the all-back text, then the full one),"
                            + " then with every permit back")
                    .containsExactly(2, 1);
            assertThat(permitRelease).as("a permit's release").containsExactly(1, 1);

            try (Lease held = space.lock("permit").limit(1).tryAcquire().orElseThrow()) {
                assertThat(trips.during(
                                () -> assertThat(space.lock("permit").limit(1).tryAcquire())
                                        .isEmpty()))
                        .as("a busy try: the all-back text, the full text, then its rollback with the reason")
                        .isEqualTo(3);
                assertThat(trips.during(
                                () -> assertThat(space.lock("permit").limit(1).tryAcquire())
                                        .isEmpty()))
                        .as("the next busy try, the name seen held: the full text and its rollback")
                        .isEqualTo(2);
                assertThatThrownBy(() -> space.lock("permit").limit(2).tryAcquire())
                        .isInstanceOf(LimitMismatchException.class);
                assertThat(held.isValid()).isTrue();
            }
            assertThat(space.status("permit").holders()).as("nothing left held").isEmpty();
        }
    }

    /**
     * The all-back text takes the holder's epoch and token from LAST_INSERT_ID(), not from the
     * session's variables, which hold the last full try's on a connection used again: a holder
     * written with an older epoch would not be counted, and the limit would be passed. Here one
     * connection serves every try in turn (the space's own pool, one thread), and after each the
     * row's {@code readers} must equal its holder rows of the current epoch.
     */
    @Test
    void anAllBackGrant_isCountedAsEveryOther_onAConnectionUsedAgain() {
        String table = TestServers.table();
        String url = TestServers.withOptions(TestServers.mariadbUrl(), "table=" + table + "&create=true");
        try (LockSpace space = Interlock.open(url)) {
            for (int round = 0; round < 3; round++) {
                Lease a = space.lock("counted").limit(2).tryAcquire().orElseThrow(); // all back (the first: new)
                assertCounted(table);
                Lease b = space.lock("counted").limit(2).tryAcquire().orElseThrow(); // the full decision
                assertCounted(table);
                if (round == 2) { // not before: a busy try's decision leaves the next token in the session
                    assertThat(space.lock("counted").limit(2).tryAcquire())
                            .as("a third of 2")
                            .isEmpty();
                }
                a.close();
                b.close();
                assertCounted(table);
                // b's decision saw a holder, so the next try would skip the all-back text: one more
                // try, by the full decision, sees the name free again.
                space.lock("counted").limit(2).tryAcquire().orElseThrow().close();
            }
        }
    }

    /** The row's {@code readers} equals its holder rows of its epoch (LockStore's first invariant). */
    private static void assertCounted(String table) {
        String base = JdbcUrls.split(TestServers.mariadbUrl()).driverUrl();
        try (Connection c = DriverManager.getConnection(base);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT t.readers, (SELECT COUNT(*) FROM " + table + "_shared s"
                        + " WHERE s.name_key = t.name_key AND s.epoch = t.epoch) FROM " + table + " t")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(2)).as("holder rows of the row's epoch").isEqualTo(rs.getLong(1));
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** A DataSource of the application's without {@code allowMultiQueries}: the first try finds it out, nothing is granted twice. */
    @Test
    void withoutTextsOfSeveralStatements_theStandardTransactionsServe() throws SQLException {
        RoundTrips trips = new RoundTrips(TestServers.mariadbUrl());
        try (LockSpace space = open(trips)) {
            Lease first = space.lock("permit").limit(2).tryAcquire().orElseThrow();
            int[] tries = new int[2];
            Lease[] second = new Lease[1];
            tries[0] = trips.during(
                    () -> second[0] = space.lock("permit").limit(2).tryAcquire().orElseThrow());
            tries[1] =
                    trips.during(() -> assertThat(space.lock("permit").limit(2).tryAcquire())
                            .as("a third of 2")
                            .isEmpty());
            assertThat(second[0].token()).isGreaterThan(first.token());
            assertThat(tries[0])
                    .as("a grant in a transaction: autocommit off, the all-back UPDATE that misses, 5 statements,"
                            + " commit, autocommit on")
                    .isEqualTo(9);
            assertThat(tries[1])
                    .as("a busy try, the name seen held: autocommit off, 2 statements, rollback, autocommit on")
                    .isEqualTo(5);
            int release = trips.during(first::close);
            assertThat(release)
                    .as("a release in a transaction: autocommit off, 2 statements, commit, autocommit on")
                    .isEqualTo(5);
            second[0].close();
            assertThat(space.status("permit").holders()).isEmpty();
            space.lock("permit").limit(2).tryAcquire().orElseThrow().close(); // seen free again
            Lease[] again = new Lease[1];
            assertThat(trips.during(() -> again[0] =
                            space.lock("permit").limit(2).tryAcquire().orElseThrow()))
                    .as("a grant once every permit is back: autocommit off, its UPDATE, the row read back,"
                            + " the holder's row, commit, autocommit on")
                    .isEqualTo(6);
            again[0].close();
        }
    }

    /**
     * A permit try held up by another transaction's lock on the name's row is cancelled at the
     * statement time limit, from the store's timer: the driver's query timeout would bound only
     * the text's first statement (MariaDB Connector/J puts {@code SET STATEMENT
     * max_statement_time=... FOR} before it), and the try would wait for InnoDB's lock wait
     * timeout (50 s) until the network timeout (timeout + 5 s) broke the connection.
     */
    @Test
    void aPermitTryBehindALockedRow_isCancelledAtTheTimeout_andLeavesNoTransactionOpen() throws Exception {
        String table = TestServers.table();
        String url = TestServers.mariadbUrl();
        try (LockSpace space =
                        Interlock.open(TestServers.withOptions(url, "table=" + table + "&create=true&timeout=1s"));
                Connection other =
                        DriverManager.getConnection(JdbcUrls.split(url).driverUrl())) {
            space.lock("job").limit(2).tryAcquire().orElseThrow().close();
            other.setAutoCommit(false);
            try (Statement st = other.createStatement()) {
                st.executeQuery("SELECT 1 FROM " + table + " WHERE name = 'job' FOR UPDATE")
                        .close();
                long t = System.nanoTime();
                assertThatThrownBy(() -> space.lock("job").limit(2).tryAcquire())
                        .isInstanceOf(LockBackendException.class);
                long ms = (System.nanoTime() - t) / 1_000_000;
                // The try and the clean-up after it, each cancelled at 1 s.
                assertThat(ms).as("ms until the call failed").isBetween(900L, 4_500L);
                try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM information_schema.INNODB_TRX")) {
                    rs.next();
                    assertThat(rs.getInt(1))
                            .as("open transactions: only the one holding the row")
                            .isEqualTo(1);
                }
            } finally {
                other.rollback();
            }
            try (Lease l = space.lock("job").limit(2).tryAcquire().orElseThrow()) {
                assertThat(space.status("job").holders()).hasSize(1);
            }
        }
    }
}
