package dev.interlock.spring.boot.it;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import redis.embedded.RedisServer;

/**
 * The servers of {@link BootApplicationIT}, started by the test on loopback ports, and stopped and
 * started again on the same port (and, for PostgreSQL, the same data directory) to see the health
 * indicator go DOWN and come back UP.
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

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Embedded PostgreSQL (io.zonky) on {@code port}, its data in {@code dataDir} so that a restart keeps the lock table. */
    static final class Postgres implements Server {
        final int port = freePort();
        private final Path dataDir;
        private EmbeddedPostgres pg;

        Postgres(Path dataDir) {
            this.dataDir = dataDir;
            start();
        }

        String url() {
            return "jdbc:postgresql://localhost:" + port + "/postgres?user=postgres";
        }

        @Override
        public synchronized void start() {
            try {
                pg = EmbeddedPostgres.builder().setPort(port).setDataDirectory(dataDir).setCleanDataDirectory(false)
                        .setRegisterShutdownHook(false).start();
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
            }
        }

        @Override
        public synchronized void stop() {
            try {
                pg.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            stop();
        }
    }

    /** Redis 6.2 of embedded-redis on {@code port}, with a password (so that the test can look for it where it must not be). */
    static final class Redis implements Server {
        final int port = freePort();
        private final String password;
        private RedisServer server;

        Redis(String password) {
            this.password = password;
            start();
        }

        String uri() {
            return "redis://:" + password + "@127.0.0.1:" + port;
        }

        @Override
        public synchronized void start() {
            try {
                server = RedisServer.newRedisServer().port(port).bind("127.0.0.1").setting("save \"\"").setting("appendonly no")
                        .setting("daemonize no").setting("requirepass " + password).build();
                server.start();
            } catch (IOException e) {
                throw new UncheckedIOException("Redis did not start: " + e.getMessage(), e);
            }
        }

        @Override
        public synchronized void stop() {
            try {
                server.stop();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            stop();
        }
    }
}
