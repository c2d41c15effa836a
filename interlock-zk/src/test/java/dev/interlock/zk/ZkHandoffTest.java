package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * A hand-off is the release's delete and the watch event to the one waiter, no more: a waiter
 * kept out by one place only holds once its watch says that place is gone, without listing the
 * queue again.
 */
class ZkHandoffTest {
    private final String path = TestZk.newPath();

    /** A client that counts the listings and the watches its space sends. */
    static final class CountingZooKeeper extends ZooKeeper {
        final AtomicInteger listings = new AtomicInteger();
        final AtomicInteger watchesSet = new AtomicInteger();

        CountingZooKeeper(String connect) throws IOException {
            super(connect, 10_000, e -> {});
        }

        @Override
        public List<String> getChildren(String path, boolean watch) throws KeeperException, InterruptedException {
            listings.incrementAndGet();
            return super.getChildren(path, watch);
        }

        @Override
        public Stat exists(String path, Watcher watcher) throws KeeperException, InterruptedException {
            Stat st = super.exists(path, watcher);
            watchesSet.incrementAndGet();
            return st;
        }
    }

    private static CompletableFuture<Lease> acquireInBackground(LockSpace space) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return space.acquire("job", Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void aWaiterBehindTheHolderOnly_holdsOnItsWatchEvent_withoutListingAgain() throws Exception {
        CountingZooKeeper zk = new CountingZooKeeper(TestZk.server().getConnectString());
        try (LockSpace holderSpace = Interlock.open(TestZk.uri(path, ""));
                LockSpace waiterSpace = Interlock.builder("zk://ignored:1" + path)
                        .option(ZkOptions.CLIENT, zk)
                        .open()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> zk.getState().isConnected());
            Lease held = holderSpace.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> waiter = acquireInBackground(waiterSpace);
            await().atMost(Duration.ofSeconds(10)).until(() -> zk.watchesSet.get() == 1);
            int listings = zk.listings.get();
            long heldToken = held.token();
            held.close();
            try (Lease next = waiter.get(10, TimeUnit.SECONDS)) {
                assertThat(next.token()).isGreaterThan(heldToken);
                assertThat(zk.listings.get())
                        .as("listings after the release (the watch event alone grants)")
                        .isEqualTo(listings);
                assertThat(holderSpace.tryAcquire("job")).isEmpty();
            }
            holderSpace.tryAcquire("job").orElseThrow().close();
        } finally {
            zk.close();
        }
    }

    /** Two places ahead: the release of the first is not enough, and the waiter lists again. */
    @Test
    void aWaiterBehindTwoPlaces_listsAgain_andWaitsForBoth() throws Exception {
        CountingZooKeeper zk = new CountingZooKeeper(TestZk.server().getConnectString());
        try (LockSpace a = Interlock.open(TestZk.uri(path, ""));
                LockSpace b = Interlock.open(TestZk.uri(path, ""));
                LockSpace waiterSpace = Interlock.builder("zk://ignored:1" + path)
                        .option(ZkOptions.CLIENT, zk)
                        .open()) {
            Lease first = a.tryAcquire("job").orElseThrow();
            CompletableFuture<Lease> second = acquireInBackground(b);
            await().atMost(Duration.ofSeconds(10)).until(() -> a.status("job").waiters() == 1);
            CompletableFuture<Lease> third = acquireInBackground(waiterSpace);
            await().atMost(Duration.ofSeconds(10)).until(() -> zk.watchesSet.get() == 1);
            first.close();
            Lease secondLease = second.get(10, TimeUnit.SECONDS);
            assertThat(third).isNotDone();
            secondLease.close();
            third.get(10, TimeUnit.SECONDS).close();
        } finally {
            zk.close();
        }
    }
}
