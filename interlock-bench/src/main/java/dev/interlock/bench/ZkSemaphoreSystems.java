package dev.interlock.bench;

import dev.interlock.Interlock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * Semaphores under {@link LockThroughput} on {@code zk:}: one permit of N per cycle, Interlock's
 * {@code limit(N)} against Curator's {@code InterProcessSemaphoreV2} (its lease-per-permit
 * semaphore), each system on one client (one session) shared by its threads.
 */
final class ZkSemaphoreSystems {
    private ZkSemaphoreSystems() {}

    static LockSystem interlock(String connect, int permits) {
        return LockSystem.interlock(
                Interlock.open("zk://" + connect + "/bench-interlock-permits"),
                "Interlock zk: limit(" + permits + ")",
                request -> request.limit(permits));
    }

    static LockSystem curator(String connect, int permits) throws InterruptedException {
        CuratorFramework client =
                CuratorFrameworkFactory.newClient(connect, 10_000, 10_000, new ExponentialBackoffRetry(100, 3));
        client.start();
        client.blockUntilConnected(10, TimeUnit.SECONDS);
        return new LockSystem() {
            @Override
            public String label() {
                return "Curator InterProcessSemaphoreV2(" + permits + ")";
            }

            @Override
            public Locker newLocker() {
                Map<String, InterProcessSemaphoreV2> mine = new HashMap<>();
                return new Locker() {
                    InterProcessSemaphoreV2 held;
                    org.apache.curator.framework.recipes.locks.Lease lease;

                    @Override
                    public void acquire(String name) throws Exception {
                        held = mine.computeIfAbsent(
                                name, n -> new InterProcessSemaphoreV2(client, "/curator-semaphore/" + n, permits));
                        lease = held.acquire();
                    }

                    @Override
                    public void release() {
                        held.returnLease(lease);
                    }
                };
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
