package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.FakeTicker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;

/** A space on the application's own ZooKeeper client ({@link ZkOptions#CLIENT}), as {@code jdbc:} takes a DataSource. */
class ZkGivenClientTest {
    private final String path = TestZk.newPath();

    private static ZooKeeper client() throws Exception {
        ZooKeeper zk = new ZooKeeper(TestZk.server().getConnectString(), 10_000, e -> {});
        await().atMost(Duration.ofSeconds(10)).until(() -> zk.getState().isConnected());
        return zk;
    }

    @Test
    void locksInTheGivenSession_andLeavesTheClientOpen() throws Exception {
        ZooKeeper zk = client();
        try {
            try (LockSpace given = Interlock.builder("zk://ignored:1" + path)
                            .option(ZkOptions.CLIENT, zk)
                            .open();
                    LockSpace other = Interlock.open(TestZk.uri(path, ""))) {
                try (Lease l = given.tryAcquire("job").orElseThrow()) {
                    assertThat(other.tryAcquire("job")).isEmpty();
                    assertThat(zk.exists(path + "/job", false).getNumChildren()).isEqualTo(1);
                    assertThat(other.status("job").holders())
                            .singleElement()
                            .satisfies(h ->
                                    assertThat(h.ownerId()).hasValue(l.owner().id()));
                }
                other.tryAcquire("job").orElseThrow().close();
            }
            assertThat(zk.getState().isAlive())
                    .as("the space does not close the application's client")
                    .isTrue();
        } finally {
            zk.close();
        }
    }

    /**
     * The application's client keeps its session when the space declares it lost (its clock
     * passed the loss point): a waiter's place in that session must not stay in the queue ahead
     * of the place it takes next, or it would wait behind itself.
     */
    @Test
    void aWaiterWhoseSessionWasDeclaredLost_leavesNoPlaceBehindItself() throws Exception {
        ZooKeeper zk = client();
        FakeTicker ticker = new FakeTicker();
        try (LockSpace given = Interlock.builder("zk://ignored:1" + path)
                        .option(ZkOptions.CLIENT, zk)
                        .ticker(ticker)
                        .open();
                LockSpace other = Interlock.open(TestZk.uri(path, ""))) {
            Lease held = other.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(() -> {
                try {
                    return given.acquire("job", Duration.ofSeconds(60));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> zk.getChildren(path + "/job", false).size() == 2);
            List<String> places = zk.getChildren(path + "/job", false);
            SessionKeeper keeper = ((ZkLockBackend) Spaces.backend(given)).keeper;
            ZkSession before = keeper.currentIfLive();
            ticker.advance(Duration.ofNanos(before.deadline.lossPoint() - ticker.read()));
            keeper.keep();
            assertThat(before.ended()).isTrue();
            // The waiter's next try (within its poll) takes a new place and gives the old one up.
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> keeper.currentIfLive() != null && keeper.currentIfLive() != before);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                List<String> now = zk.getChildren(path + "/job", false);
                return now.size() == 2
                        && !now.equals(places)
                        && !new java.util.HashSet<>(now).equals(new java.util.HashSet<>(places));
            });
            held.close();
            waiter.get(10, TimeUnit.SECONDS).close();
        } finally {
            zk.close();
        }
    }

    @Test
    void aClosedClient_isRefusedWithWhatToDo() throws Exception {
        ZooKeeper zk = client();
        zk.close();
        assertThatThrownBy(() -> Interlock.builder("zk://ignored:1" + path)
                        .option(ZkOptions.CLIENT, zk)
                        .open())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("the ZooKeeper client given to this space has no session any more")
                .hasMessageContaining("open the space on a new client");
    }
}
