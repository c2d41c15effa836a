package dev.interlock.shedlock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import redis.embedded.RedisServer;

/**
 * ShedLock's provider contract on {@code redis:}: the Redis 6.2 server of
 * {@code com.github.codemonstur:embedded-redis} on a free loopback port, each test under its own
 * key prefix.
 */
class RedisShedLockTest extends ServerClockShedLockContract {
    private static RedisServer server;
    private static int port;

    private final String prefix = "s" + UUID.randomUUID().toString().substring(0, 8) + ":";

    @BeforeAll
    static void startServer() throws IOException {
        IOException last = null;
        for (int i = 0; i < 5; i++) {
            try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            }
            server = RedisServer.newRedisServer().port(port).bind("127.0.0.1")
                    .setting("save \"\"").setting("appendonly no").setting("daemonize no").build();
            try {
                server.start();
                return;
            } catch (IOException e) {
                last = e; // the port was taken meanwhile
            }
        }
        throw new UncheckedIOException("could not start a Redis server", last);
    }

    @AfterAll
    static void stopServer() throws IOException {
        if (server != null) {
            server.stop();
        }
    }

    @Override
    protected String uri() {
        return "redis://127.0.0.1:" + port + "/0?prefix=" + prefix;
    }
}
