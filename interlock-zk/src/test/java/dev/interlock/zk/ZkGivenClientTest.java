package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.time.Duration;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;

/** A space on the application's own ZooKeeper client ({@link ZkOptions#CLIENT}), as {@code jdbc:} takes a DataSource. */
class ZkGivenClientTest {
    private final String path = TestZk.newPath();

    private static ZooKeeper client() throws Exception {
        ZooKeeper zk = new ZooKeeper(TestZk.server().getConnectString(), 10_000, e -> { });
        await().atMost(Duration.ofSeconds(10)).until(() -> zk.getState().isConnected());
        return zk;
    }

    @Test
    void locksInTheGivenSession_andLeavesTheClientOpen() throws Exception {
        ZooKeeper zk = client();
        try {
            try (LockSpace given = Interlock.builder("zk://ignored:1" + path).option(ZkOptions.CLIENT, zk).open();
                    LockSpace other = Interlock.open(TestZk.uri(path, ""))) {
                try (Lease l = given.tryAcquire("job").orElseThrow()) {
                    assertThat(other.tryAcquire("job")).isEmpty();
                    assertThat(zk.exists(path + "/job", false).getNumChildren()).isEqualTo(1);
                    assertThat(other.status("job").holders()).singleElement()
                            .satisfies(h -> assertThat(h.ownerId()).hasValue(l.owner().id()));
                }
                other.tryAcquire("job").orElseThrow().close();
            }
            assertThat(zk.getState().isAlive()).as("the space does not close the application's client").isTrue();
        } finally {
            zk.close();
        }
    }

    @Test
    void aClosedClient_isRefusedWithWhatToDo() throws Exception {
        ZooKeeper zk = client();
        zk.close();
        assertThatThrownBy(() -> Interlock.builder("zk://ignored:1" + path).option(ZkOptions.CLIENT, zk).open())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("the ZooKeeper client given to this space has no session any more")
                .hasMessageContaining("open the space on a new client");
    }
}
