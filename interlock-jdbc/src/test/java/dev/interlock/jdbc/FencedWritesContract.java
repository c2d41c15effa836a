package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.jdbc.FencedWrites.Outcome;
import dev.interlock.jdbc.FencedWrites.Result;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link FencedWrites} on one database: subclasses give the JDBC URL (without Interlock's options). */
abstract class FencedWritesContract {
    protected abstract String driverUrl();

    Connection c;
    String table;
    FencedWrites accounts;

    @BeforeEach
    void setUp() throws SQLException {
        c = DriverManager.getConnection(driverUrl());
        table = TestServers.table();
        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + table + " (id INT PRIMARY KEY, balance INT NOT NULL, fence_token BIGINT)");
            st.execute("INSERT INTO " + table + " (id, balance) VALUES (1, 100)");
        }
        accounts = FencedWrites.on(table, "fence_token");
    }

    @AfterEach
    void tearDown() throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + table);
        }
        c.close();
    }

    private int balance(int id) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT balance FROM " + table + " WHERE id = " + id)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void update_newerThenOlder_olderRefusedNamingBoth_equalPasses() throws SQLException {
        assertThat(accounts.update(c, 7, "balance = balance + ?", "id = ?", 10, 1)
                        .outcome())
                .isEqualTo(Outcome.UPDATED);
        Result stale = accounts.update(c, 6, "balance = balance + ?", "id = ?", 1000, 1);
        assertThat(stale.outcome()).isEqualTo(Outcome.REFUSED);
        assertThat(stale.currentToken()).isEqualTo(OptionalLong.of(7));
        assertThat(stale.written()).isFalse();
        assertThatThrownBy(stale::orThrow)
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("fencing token 6")
                .hasMessageContaining("token 7 already landed")
                .hasMessageContaining("nothing was written")
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("IL001"));
        assertThat(accounts.update(c, 7, "balance = balance + ?", "id = ?", 1, 1)
                        .rows())
                .isEqualTo(1);
        assertThat(balance(1)).isEqualTo(111);
    }

    @Test
    void update_missingRow_isNoSuchRow_notRefused() throws SQLException {
        Result r = accounts.update(c, 5, "balance = ?", "id = ?", 1, 99);
        assertThat(r.outcome()).isEqualTo(Outcome.NO_SUCH_ROW);
        assertThatThrownBy(r::orThrow)
                .hasMessageContaining("no row of")
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("02000"));
    }

    @Test
    void upsert_insertsThenFencesTheRow() throws SQLException {
        Map<String, Object> key = Map.of("id", 2);
        Map<String, Object> values = new LinkedHashMap<>();
        values.put("balance", 5);
        assertThat(accounts.upsert(c, 3, key, values).outcome()).isEqualTo(Outcome.INSERTED);
        values.put("balance", 6);
        assertThat(accounts.upsert(c, 4, key, values).outcome()).isEqualTo(Outcome.UPDATED);
        values.put("balance", 7);
        Result stale = accounts.upsert(c, 3, key, values);
        assertThat(stale.outcome()).isEqualTo(Outcome.REFUSED);
        assertThat(stale.currentToken()).hasValue(4);
        assertThat(balance(2)).isEqualTo(6);
    }

    @Test
    void badIdentifiersAndCounts_areRefusedSayingWhy() {
        assertThatThrownBy(() -> FencedWrites.on("accounts; DROP TABLE x", "fence_token"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain identifier");
        assertThatThrownBy(() -> FencedWrites.on("accounts", "fence token"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("plain identifier");
        assertThatThrownBy(() -> accounts.update(c, 1, "balance = ?", "id = ?", 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("1 and 1 placeholders, but 1 values");
        assertThatThrownBy(() -> accounts.update(c, -1, "balance = ?", "id = ?", 1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("never negative");
    }
}
