package dev.interlock.bench;

import dev.interlock.Interlock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * The {@code zk:} systems of {@link LockThroughput}, on one ZooKeeper server: Interlock, Curator's
 * {@code InterProcessMutex} and {@code InterProcessReadWriteLock} (its write lock), and the raw
 * floor. Each system has one client (one session) shared by its threads, as an application would.
 */
final class ZkSystems {
    private ZkSystems() {}

    /** An in-process server on a random loopback port (its transaction log not forced to disk: the same for every system). */
    static TestingServer server() throws Exception {
        System.setProperty("zookeeper.forceSync", System.getProperty("bench.zk.forceSync", "no"));
        return new TestingServer(true);
    }

    static LockSystem open(String kind, String connect) throws Exception {
        switch (kind) {
            case "interlock":
                return interlock(connect);
            case "curator-mutex":
                return curator(
                        connect,
                        "Curator InterProcessMutex",
                        (c, name) -> new InterProcessMutex(c, "/curator-mutex/" + name));
            case "curator-rw":
                return curator(
                        connect,
                        "Curator InterProcessReadWriteLock (write)",
                        (c, name) -> new InterProcessReadWriteLock(c, "/curator-rw/" + name).writeLock());
            case "floor":
                return floor(connect);
            default:
                if (kind.matches("interlock-permit[1-9][0-9]*")) {
                    return ZkSemaphoreSystems.interlock(connect, Integer.parseInt(kind.substring(16)));
                }
                if (kind.matches("curator-semaphore[1-9][0-9]*")) {
                    return ZkSemaphoreSystems.curator(connect, Integer.parseInt(kind.substring(17)));
                }
                throw new IllegalArgumentException(
                        "unknown zk system '" + kind
                                + "'; known: interlock, curator-mutex, curator-rw, floor, interlock-permitN, curator-semaphoreN");
        }
    }

    /** Interlock opened from its URI (one session, watches on the one node each waiter waits for). */
    static LockSystem interlock(String connect) {
        return LockSystem.interlock(Interlock.open("zk://" + connect + "/bench-interlock"), "Interlock zk:");
    }

    /** Makes a recipe's lock object for one name on a client. */
    interface Recipe {
        InterProcessLock make(CuratorFramework client, String name);
    }

    /** A Curator recipe on one started client; each thread makes its own lock objects (they are reentrant per thread). */
    static LockSystem curator(String connect, String label, Recipe recipe) throws InterruptedException {
        CuratorFramework client =
                CuratorFrameworkFactory.newClient(connect, 10_000, 10_000, new ExponentialBackoffRetry(100, 3));
        client.start();
        client.blockUntilConnected(10, TimeUnit.SECONDS);
        return new LockSystem() {
            @Override
            public String label() {
                return label;
            }

            @Override
            public Locker newLocker() {
                Map<String, InterProcessLock> mine = new HashMap<>();
                return new Locker() {
                    InterProcessLock held;

                    @Override
                    public void acquire(String name) throws Exception {
                        held = mine.computeIfAbsent(name, n -> recipe.make(client, n));
                        held.acquire();
                    }

                    @Override
                    public void release() throws Exception {
                        held.release();
                    }
                };
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }

    /**
     * The floor: one {@code create} of an ephemeral node at the lock's path to take (retried at
     * once while it exists: no queue, no watch, no token), one {@code delete} to give back, on
     * one plain ZooKeeper client.
     */
    static LockSystem floor(String connect) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        connected.await(10, TimeUnit.SECONDS);
        try {
            zk.create("/floor", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        } catch (KeeperException.NodeExistsException e) {
            // from an earlier round
        }
        return new LockSystem() {
            @Override
            public String label() {
                return "raw floor (create ephemeral / delete)";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    String path;

                    @Override
                    public void acquire(String name) throws Exception {
                        String p = "/floor/" + name;
                        while (true) {
                            try {
                                zk.create(p, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
                                break;
                            } catch (KeeperException.NodeExistsException e) {
                                LockSystem.pause(0);
                            }
                        }
                        path = p;
                    }

                    @Override
                    public void release() throws Exception {
                        zk.delete(path, -1);
                    }
                };
            }

            @Override
            public void close() {
                try {
                    zk.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
    }
}
