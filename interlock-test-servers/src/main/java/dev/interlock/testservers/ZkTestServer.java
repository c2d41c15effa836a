package dev.interlock.testservers;

import java.util.Map;
import java.util.UUID;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper server in this JVM on a random loopback port (Curator's {@code TestingServer},
 * from {@code org.apache.curator:curator-test}, which a module using this class states itself in
 * test scope), shared by every test of the JVM and stopped at exit. Each test takes a space path
 * of its own, so tests never see each other's locks.
 *
 * <p>The server grants sessions of up to 10 minutes (its default cap is 40 s): tests that move a
 * fake ticker by minutes ask for a session long enough ({@link #LONG_SESSION}) that the jumps never
 * carry a session past its loss point, which {@code zk:} would rightly take for a paused process.
 */
public final class ZkTestServer {
    /** The URI query of a session that fake-time jumps of up to 6 minutes leave trusted (2/3 of it). */
    public static final String LONG_SESSION = "session=9m";

    private static TestingServer shared;

    private ZkTestServer() {}

    /** {@code host:port} of the shared server, started at the first call. */
    public static synchronized String connectString() {
        if (shared == null) {
            System.setProperty("zookeeper.forceSync", "no"); // a test server on a shared disk: no fsync per commit
            try {
                shared = new TestingServer(
                        new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, Map.of("maxSessionTimeout", "600000")),
                        true);
            } catch (Exception e) {
                throw new IllegalStateException("could not start a ZooKeeper test server", e);
            }
            TestingServer started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                } catch (Exception e) {
                    // the JVM ends anyway
                }
            }));
        }
        return shared.getConnectString();
    }

    /** {@code zk://127.0.0.1:PORT/tRANDOM?QUERY}: a fresh space on the shared server. */
    public static String newUri(String query) {
        return "zk://" + connectString() + "/t"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 16) + (query.isEmpty() ? "" : "?" + query);
    }
}
