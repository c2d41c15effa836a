package dev.interlock.testservers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import redis.embedded.RedisServer;
import redis.embedded.core.RedisServerBuilder;

/**
 * A real Redis server on a random loopback port: the Redis 6.2 binary shipped in
 * {@code com.github.codemonstur:embedded-redis}, or the one named by {@value #BINARY} (e.g.
 * Debian's {@code /usr/bin/redis-server}, 7.0), without persistence.
 *
 * <p>With {@value #EXTERNAL_URI}{@code =redis://host:port/db} the shared server is that one instead
 * (each test under its own random key prefix, so tests leave each other and other users alone);
 * tests that must stop or reconfigure a server ask for a {@link #privateServer} and are then skipped.
 */
public final class RedisTestServer implements AutoCloseable {
    /** Names an external server for the shared one. */
    public static final String EXTERNAL_URI = "INTERLOCK_TEST_REDIS_URI";
    /** Names a redis-server binary to run instead of the embedded one. */
    public static final String BINARY = "INTERLOCK_TEST_REDIS_SERVER";

    private static RedisTestServer shared;

    private final String base;
    private final int port;
    private final RedisServer server;

    private RedisTestServer(String base, int port, RedisServer server) {
        this.base = base;
        this.port = port;
        this.server = server;
    }

    /** The server shared by every test of this JVM (started once, stopped at exit), or the external one. */
    public static synchronized RedisTestServer shared() {
        if (shared == null) {
            String external = System.getenv(EXTERNAL_URI);
            if (external != null && !external.isBlank()) {
                shared = new RedisTestServer(
                        external.replaceAll("/+$", ""), URI.create(external).getPort(), null);
            } else {
                shared = start(List.of());
                Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
            }
        }
        return shared;
    }

    /** True unless the tests run against an external server. */
    public static boolean ownServers() {
        String external = System.getenv(EXTERNAL_URI);
        return external == null || external.isBlank();
    }

    /**
     * A server of its own with extra configuration lines (e.g. {@code requirepass s3cret}); skips
     * the calling test when the tests run against an external server.
     */
    public static RedisTestServer privateServer(String... settings) {
        Assumptions.assumeTrue(ownServers(), "needs a Redis server of its own; " + EXTERNAL_URI + " is set");
        return start(List.of(settings));
    }

    /** A server of its own with extra configuration lines, whatever {@value #EXTERNAL_URI} says (benchmarks). */
    public static RedisTestServer start(List<String> settings) {
        IOException last = null;
        for (int i = 0; i < 5; i++) {
            int port = LoopbackPorts.free();
            RedisServer s = build(port, settings);
            try {
                s.start();
                return new RedisTestServer("redis://127.0.0.1:" + port, port, s);
            } catch (IOException e) {
                last = e; // the port was taken meanwhile: another one
            }
        }
        throw new UncheckedIOException("could not start a Redis server", last);
    }

    private static RedisServer build(int port, List<String> settings) {
        try {
            RedisServerBuilder b = RedisServer.newRedisServer()
                    .port(port)
                    .bind("127.0.0.1")
                    .setting("save \"\"")
                    .setting("appendonly no")
                    .setting("daemonize no");
            String binary = System.getenv(BINARY);
            if (binary != null && !binary.isBlank()) {
                File f = new File(binary);
                b.executableProvider(() -> f);
            }
            for (String s : settings) {
                b.setting(s);
            }
            return b.build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    /** {@code redis://host:port} (or the external URI) without a trailing slash or options. */
    public String base() {
        return base;
    }

    /** The base with a database number: {@code redis://host:port/0} unless the base names one. */
    public String withDatabase() {
        return base.matches("rediss?://[^/]*") ? base + "/0" : base;
    }

    /** A fresh random key prefix, so that tests never see each other's locks. */
    public static String newPrefix() {
        return "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** A URI on this server under {@code prefix}, with {@code options} ({@code k=v&...}, may be empty). */
    public String uri(String prefix, String options) {
        String path = withDatabase();
        return path + (path.contains("?") ? "&" : "?") + "prefix=" + prefix + (options.isEmpty() ? "" : "&" + options);
    }

    /** Stops the server; {@link #restart()} brings it back on the same port. */
    public void stop() throws IOException {
        server.stop();
    }

    /** Starts the stopped server again on the same port. */
    public void restart() throws IOException {
        server.start();
    }

    @Override
    public void close() {
        if (server != null) {
            try {
                server.stop();
            } catch (IOException | RuntimeException e) {
                // exiting anyway
            }
        }
    }
}
