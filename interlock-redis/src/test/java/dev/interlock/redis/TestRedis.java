package dev.interlock.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;
import redis.clients.jedis.RedisClient;
import redis.embedded.RedisServer;
import redis.embedded.core.RedisServerBuilder;

/**
 * A real Redis server for the tests, started by them on a random loopback port: the Redis 6.2
 * binary shipped in {@code com.github.codemonstur:embedded-redis}, or the one named by
 * {@code INTERLOCK_TEST_REDIS_SERVER} (e.g. Debian's {@code /usr/bin/redis-server}, 7.0).
 *
 * <p>With {@code INTERLOCK_TEST_REDIS_URI=redis://host:port/db} the suites run against that server
 * instead (each test under its own random key prefix, so they leave each other and other users
 * alone); tests that must stop or reconfigure the server are then skipped.
 */
final class TestRedis implements AutoCloseable {
    private static TestRedis shared;

    private final String base;
    private final int port;
    private final RedisServer server;

    private TestRedis(String base, int port, RedisServer server) {
        this.base = base;
        this.port = port;
        this.server = server;
    }

    /** The server shared by every suite of this JVM (started once, stopped at exit). */
    static synchronized TestRedis shared() {
        if (shared == null) {
            String external = System.getenv("INTERLOCK_TEST_REDIS_URI");
            if (external != null && !external.isBlank()) {
                shared = new TestRedis(external.replaceAll("/+$", ""), URI.create(external).getPort(), null);
            } else {
                shared = start(List.of());
                Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
            }
        }
        return shared;
    }

    /** True unless the suites run against an external server. */
    static boolean ownServers() {
        String external = System.getenv("INTERLOCK_TEST_REDIS_URI");
        return external == null || external.isBlank();
    }

    /** A private server with extra configuration lines (e.g. {@code requirepass s3cret}); skips the test on an external server. */
    static TestRedis privateServer(String... settings) {
        Assumptions.assumeTrue(ownServers(), "needs a Redis server of its own; INTERLOCK_TEST_REDIS_URI is set");
        return start(List.of(settings));
    }

    private static TestRedis start(List<String> settings) {
        IOException last = null;
        for (int i = 0; i < 5; i++) {
            int port = freePort();
            RedisServer s = build(port, settings);
            try {
                s.start();
                return new TestRedis("redis://127.0.0.1:" + port, port, s);
            } catch (IOException e) {
                last = e; // the port was taken meanwhile: another one
            }
        }
        throw new UncheckedIOException("could not start a Redis server", last);
    }

    private static RedisServer build(int port, List<String> settings) {
        try {
            RedisServerBuilder b = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no").setting("daemonize no");
            String binary = System.getenv("INTERLOCK_TEST_REDIS_SERVER");
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

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int port() {
        return port;
    }

    /** {@code redis://host:port} (or the external URI) without a trailing slash or options. */
    String base() {
        return base;
    }

    /** A fresh random key prefix, so that tests never see each other's locks. */
    static String newPrefix() {
        return "t" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** A URI on this server under {@code prefix}, with {@code options} ({@code k=v&...}, may be empty). */
    String uri(String prefix, String options) {
        String path = base.matches("rediss?://[^/]*") ? base + "/0" : base;
        return path + (path.contains("?") ? "&" : "?") + "prefix=" + prefix + (options.isEmpty() ? "" : "&" + options);
    }

    /** A plain client for setting up and inspecting state (the caller closes it). */
    RedisClient admin() {
        return RedisClient.create(URI.create(base.matches("rediss?://[^/]*") ? base + "/0" : base));
    }

    void stop() throws IOException {
        server.stop();
    }

    /** Starts the stopped server again on the same port. */
    void restart() throws IOException {
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
