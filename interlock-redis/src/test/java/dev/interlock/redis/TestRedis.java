package dev.interlock.redis;

import dev.interlock.testservers.RedisTestServer;
import java.io.IOException;
import java.net.URI;
import redis.clients.jedis.RedisClient;

/**
 * The Redis of the suites: interlock-test-servers' {@link RedisTestServer} (the shared server, or
 * the external one named by {@code INTERLOCK_TEST_REDIS_URI}; a private one for tests that stop or
 * reconfigure it), with a plain client for setting up and inspecting state.
 */
final class TestRedis implements AutoCloseable {
    private final RedisTestServer server;

    private TestRedis(RedisTestServer server) {
        this.server = server;
    }

    /** The server shared by every suite of this JVM (started once, stopped at exit). */
    static TestRedis shared() {
        return new TestRedis(RedisTestServer.shared());
    }

    /** True unless the suites run against an external server. */
    static boolean ownServers() {
        return RedisTestServer.ownServers();
    }

    /** A private server with extra configuration lines (e.g. {@code requirepass s3cret}); skips the test on an external server. */
    static TestRedis privateServer(String... settings) {
        return new TestRedis(RedisTestServer.privateServer(settings));
    }

    int port() {
        return server.port();
    }

    /** {@code redis://host:port} (or the external URI) without a trailing slash or options. */
    String base() {
        return server.base();
    }

    /** A fresh random key prefix, so that tests never see each other's locks. */
    static String newPrefix() {
        return RedisTestServer.newPrefix();
    }

    /** A URI on this server under {@code prefix}, with {@code options} ({@code k=v&...}, may be empty). */
    String uri(String prefix, String options) {
        return server.uri(prefix, options);
    }

    /** A plain client for setting up and inspecting state (the caller closes it). */
    RedisClient admin() {
        return RedisClient.create(URI.create(server.withDatabase()));
    }

    /** Places in the queue of a lock, read without a script. */
    static long queuedFields(RedisClient admin, String lock) {
        return admin.hkeys(lock).stream().filter(f -> f.startsWith("w:")).count();
    }

    /** Scripts the server has run since it started (EVALSHA and EVAL calls, from INFO commandstats). */
    static long scriptsRun(RedisClient admin) {
        return admin.info("commandstats")
                .lines()
                .filter(l -> l.startsWith("cmdstat_evalsha:") || l.startsWith("cmdstat_eval:"))
                .mapToLong(l -> Long.parseLong(l.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1")))
                .sum();
    }

    void stop() throws IOException {
        server.stop();
    }

    /** Starts the stopped server again on the same port. */
    void restart() throws IOException {
        server.restart();
    }

    @Override
    public void close() {
        server.close();
    }
}
