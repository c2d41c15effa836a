package dev.interlock.zk;

import dev.interlock.testkit.PermitHolderFaultContract;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * A permit holder JVM killed (kill -9) or stopped (SIGSTOP) on {@code zk:}: its permit comes back
 * when the servers expire its session (the contract's lease as the session timeout, on a server
 * ticking every 250 ms), never sooner, and meanwhile nobody gets a permit beyond N; the stopped
 * holder, continued, is told it lost its permit.
 */
class ZkPermitHolderFaultIT extends PermitHolderFaultContract {
    private static TestingServer server;

    @BeforeAll
    static void startServer() throws Exception {
        server = TestZk.startFastTicking();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @Override
    protected String uri() {
        return "zk://" + server.getConnectString() + TestZk.newPath() + "?session=" + LEASE_MS + "ms";
    }
}
