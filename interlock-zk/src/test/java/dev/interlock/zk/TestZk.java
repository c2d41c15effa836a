package dev.interlock.zk;

import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** One in-process ZooKeeper server for this test JVM, on a random loopback port; each test takes a path of its own. */
final class TestZk {
    private static final AtomicInteger PATHS = new AtomicInteger();
    private static TestingServer server;

    private TestZk() {}

    static synchronized TestingServer server() {
        if (server == null) {
            System.setProperty("zookeeper.forceSync", "no"); // a test server on a shared disk: no fsync per commit
            try {
                server = new TestingServer(true);
            } catch (Exception e) {
                throw new IllegalStateException("could not start a ZooKeeper test server", e);
            }
        }
        return server;
    }

    /**
     * A server of the caller's own that ticks every 250 ms, so that it grants sessions of 0.5 s to
     * 5 s: for tests that wait for a session to expire. The caller closes it.
     */
    static TestingServer startFastTicking() throws Exception {
        System.setProperty("zookeeper.forceSync", "no");
        return new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1), true);
    }

    /** A fresh space path, such as {@code /t1234-7}. */
    static String newPath() {
        return "/t" + ProcessHandle.current().pid() + "-" + PATHS.incrementAndGet();
    }

    /** {@code zk://127.0.0.1:PORT/PATH?query}. */
    static String uri(String path, String query) {
        return "zk://" + server().getConnectString() + path + (query.isEmpty() ? "" : "?" + query);
    }
}
