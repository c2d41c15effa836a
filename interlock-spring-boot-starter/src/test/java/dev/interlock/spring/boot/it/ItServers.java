package dev.interlock.spring.boot.it;

import dev.interlock.testservers.PostgresServer;
import dev.interlock.testservers.RedisTestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * The servers of {@link BootApplicationIT} (interlock-test-servers' PostgreSQL and Redis), seen as
 * servers the test can stop and start again where they were (same port, and for PostgreSQL the
 * same data, so that a restart keeps the lock table), to see the health indicator go DOWN and come
 * back UP.
 */
final class ItServers {
    private ItServers() {}

    /** A server the test can stop and start again where it was. */
    interface Server extends AutoCloseable {
        void stop();

        void start();

        @Override
        void close();
    }

    /** Embedded PostgreSQL of its own. */
    static final class Postgres implements Server {
        private final PostgresServer pg = PostgresServer.start(Map.of());

        String url() {
            return pg.url();
        }

        @Override
        public void start() {
            pg.startAgain();
        }

        @Override
        public void stop() {
            pg.stop();
        }

        @Override
        public void close() {
            pg.close();
        }
    }

    /** Redis of its own, with a password (so that the test can look for it where it must not be). */
    static final class Redis implements Server {
        private final String password;
        private final RedisTestServer server;

        Redis(String password) {
            this.password = password;
            this.server = RedisTestServer.start(List.of("requirepass " + password));
        }

        String uri() {
            return "redis://:" + password + "@127.0.0.1:" + server.port();
        }

        @Override
        public void start() {
            try {
                server.restart();
            } catch (IOException e) {
                throw new UncheckedIOException("Redis did not start again: " + e.getMessage(), e);
            }
        }

        @Override
        public void stop() {
            try {
                server.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            server.close();
        }
    }
}
