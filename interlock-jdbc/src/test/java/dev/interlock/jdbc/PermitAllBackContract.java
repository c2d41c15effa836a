package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A permit of a name whose permits are all back is granted by one conditional statement of the
 * name's row (StandardSql#tryPermit; one statement on PostgreSQL, one text on MySQL/MariaDB),
 * without the full decision: these are the states in which that statement must not grant, each
 * made by hand in the tables, and the one in which it must. Two backends on one database, so
 * that no line of one JVM's waiters stands between a newcomer and the database. Run on each
 * database's own form of the statement.
 */
abstract class PermitAllBackContract {
    private static final String NAME = "imports";

    private DataSource db;
    private String table;
    private JdbcLockBackend first;
    private JdbcLockBackend second;

    /** A DataSource of a database with no tables of this test yet (or of another test's names). */
    abstract DataSource dataSource() throws SQLException;

    /** The database's SQL for one second before its now. */
    abstract String aSecondAgo();

    @BeforeEach
    void open() throws SQLException {
        db = dataSource();
        table = TestServers.table();
        first = backend();
        second = backend();
    }

    private JdbcLockBackend backend() {
        return JdbcLockBackend.create(
                db,
                JdbcOptions.builder()
                        .table(table)
                        .createTable(true)
                        .listen(false)
                        .build());
    }

    @AfterEach
    void close() {
        first.close();
        second.close();
    }

    private static Attempt permit(JdbcLockBackend backend, int limit) {
        return backend.attempt(AcquireSpec.builder(NAME, Mode.EXCLUSIVE, Owner.newAcquisition())
                .limit(limit)
                .lease(Duration.ofMinutes(10))
                .build());
    }

    private void sql(String statement) throws SQLException {
        try (Connection c = db.getConnection();
                Statement st = c.createStatement()) {
            st.executeUpdate(statement);
        }
    }

    @Test
    void aWaiterInLine_keepsItsTurn_whenTheLastPermitComesBack() throws InterruptedException {
        Attempt holder = permit(first, 1);
        Grant held = holder.tryAcquire().orElseThrow();
        Attempt waiter = permit(first, 1);
        assertThat(waiter.tryAcquire()).isEmpty();
        waiter.await(0); // takes its place in the name's line, and gives up this wait at once
        held.release();
        holder.close();

        Attempt newcomer = permit(second, 1);
        assertThat(newcomer.tryAcquire())
                .as("every permit is back, and a waiter is in line")
                .isEmpty();
        Grant served = waiter.tryAcquire().orElseThrow();
        assertThat(served.token()).isGreaterThan(held.token());
        served.release();
        waiter.close();
        Grant next = newcomer.tryAcquire().orElseThrow();
        assertThat(next.token()).isGreaterThan(served.token());
        next.release();
        newcomer.close();
    }

    @Test
    void aHolderWhoseRowIsCounted_isNotOverlooked_andOneWhoseLeaseRanOutIsCleanedUp() throws SQLException {
        Attempt a = permit(first, 1);
        Grant held = a.tryAcquire().orElseThrow();
        Attempt b = permit(second, 1);
        assertThat(b.tryAcquire()).as("the one permit is held").isEmpty();

        // The holder's lease runs out (its process died): the row says 1 reader still, so the
        // all-back statement leaves it to the full decision, which cleans the holder's row up.
        // Asked from a third backend: the second saw the name held, and would not ask it.
        sql("UPDATE " + table + " SET shared_until = " + aSecondAgo());
        sql("UPDATE " + table + "_shared SET expires_at = " + aSecondAgo());
        JdbcLockBackend third = backend();
        Attempt c = permit(third, 1);
        Grant next = c.tryAcquire().orElseThrow();
        assertThat(next.token()).isGreaterThan(held.token());
        assertThat(rows(table + "_shared")).as("only the new holder's row").isEqualTo(1);
        next.release();
        c.close();
        third.close();
        b.close();
        a.close();
    }

    @Test
    void aPlainLockLast_leavesThePermitToTheFullDecision_whichRefusesAMismatch() {
        Attempt lock = first.attempt(AcquireSpec.builder(NAME, Mode.EXCLUSIVE, Owner.newAcquisition())
                .lease(Duration.ofMinutes(10))
                .build());
        Grant held = lock.tryAcquire().orElseThrow();
        Attempt p = permit(second, 2);
        assertThatThrownBy(p::tryAcquire).hasMessageContaining("lock");
        held.release();
        lock.close();
        Grant permit = p.tryAcquire().orElseThrow();
        assertThat(permit.token()).isGreaterThan(held.token());
        permit.release();
        p.close();
    }

    private long rows(String table) throws SQLException {
        try (Connection c = db.getConnection();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
