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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A permit's grant on PostgreSQL reads and cleans the name's holder rows ({@code <table>_shared})
 * only when the lock row says they can matter (PostgresSql's permit decision): every release
 * leaves a dead row version there, which an index scan of the name would walk until VACUUM. What
 * must hold either way: holders whose leases ran out are removed by the next grant, and
 * {@code readers} counts exactly the holders' rows. Lease expiry is made by moving the rows'
 * times back, not by waiting.
 */
class PostgresPermitRowsIT {
    private String table;
    private String base;
    private LockSpace space;

    @BeforeEach
    void open() {
        table = TestServers.table();
        base = JdbcUrls.split(TestServers.postgresUrl()).driverUrl();
        space = Interlock.open(TestServers.withOptions(TestServers.postgresUrl(), "table=" + table + "&create=true"));
    }

    @AfterEach
    void close() {
        space.close();
    }

    /**
     * A row planted by hand under a name that permits held and left (no client makes such a row:
     * the last permit's grant cleaned up, and each release took its own row) shows whether the
     * next grant looked for rows to clean: it must not have.
     */
    @Test
    void aPermitsGrant_onANameItsPermitsLeftCleanly_doesNotLookForRowsToClean() throws SQLException {
        space.lock("quiet").limit(3).tryAcquire().orElseThrow().close();
        String key = NameKey.of("quiet");
        sql("INSERT INTO " + table + "_shared (name_key, owner, epoch, token, expires_at, acquired_at, lease_ms)"
                + " VALUES ('" + key
                + "', 'planted', 0, 0, now() - interval '1 hour', now() - interval '2 hours', 1000)");

        try (Lease held = space.lock("quiet").limit(3).tryAcquire().orElseThrow()) {
            assertThat(owners(key)).as("holder rows while held").hasSize(2).contains("planted");
        }
        assertThat(owners(key)).as("holder rows after the release").containsExactly("planted");
    }

    /** A holder that never released (its lease ran out): the next permit's grant removes its row and counts it out. */
    @Test
    void aHolderWhoseLeaseRanOut_isCleanedByTheNextPermitsGrant() throws SQLException {
        String key = NameKey.of("stale");
        Lease stale = space.lock("stale").limit(2).tryAcquire().orElseThrow();
        expireEveryHolder(key);

        try (Lease next = space.lock("stale").limit(2).tryAcquire().orElseThrow()) {
            assertThat(owners(key)).as("holder rows: only the new holder's").hasSize(1);
            assertThat(readers(key)).as("readers").isEqualTo(1);
            stale.close(); // a late release frees nothing of the new holder's
            assertThat(owners(key)).hasSize(1);
            assertThat(readers(key)).isEqualTo(1);
        }
        assertThat(owners(key)).as("after the release").isEmpty();
        assertThat(readers(key)).isZero();
    }

    /**
     * A plain lock granted over permits that ran out leaves their rows behind (a lock's grant does
     * not read them); the next permit's grant cleans them, and counts only its own holder.
     */
    @Test
    void rowsLeftUnderALock_areCleanedByTheNextPermitsGrant() throws SQLException {
        String key = NameKey.of("mixed");
        Lease stale = space.lock("mixed").limit(2).tryAcquire().orElseThrow();
        expireEveryHolder(key);
        space.lock("mixed").tryAcquire().orElseThrow().close();
        assertThat(owners(key)).as("the permit's row, under the lock").hasSize(1);

        try (Lease permit = space.lock("mixed").limit(2).tryAcquire().orElseThrow()) {
            assertThat(owners(key)).as("only the new permit's row").hasSize(1);
            assertThat(readers(key)).isEqualTo(1);
            Lease second = space.lock("mixed").limit(2).tryAcquire().orElseThrow();
            assertThat(space.lock("mixed").limit(2).tryAcquire())
                    .as("a third of 2")
                    .isEmpty();
            second.close();
        }
        stale.close();
        assertThat(owners(key)).isEmpty();
        assertThat(readers(key)).isZero();
    }

    private void expireEveryHolder(String key) throws SQLException {
        sql("UPDATE " + table + "_shared SET expires_at = now() - interval '1 second' WHERE name_key = '" + key + "'");
        sql("UPDATE " + table + " SET shared_until = now() - interval '1 second' WHERE name_key = '" + key + "'");
    }

    private List<String> owners(String key) throws SQLException {
        List<String> owners = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(base);
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT owner FROM " + table + "_shared WHERE name_key = '" + key + "'")) {
            while (rs.next()) {
                owners.add(rs.getString(1));
            }
        }
        return owners;
    }

    private int readers(String key) throws SQLException {
        try (Connection c = DriverManager.getConnection(base);
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT readers FROM " + table + " WHERE name_key = '" + key + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private void sql(String statement) throws SQLException {
        try (Connection c = DriverManager.getConnection(base);
                Statement st = c.createStatement()) {
            st.execute(statement);
        }
    }
}
