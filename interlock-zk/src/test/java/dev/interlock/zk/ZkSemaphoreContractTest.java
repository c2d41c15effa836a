package dev.interlock.zk;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;

/**
 * The semaphore contract on an in-process ZooKeeper server, each test under its own path. A
 * permit's lease is its holder's session, kept by the servers' clock, so the fake-time case is
 * skipped and the short-lease case finds that permits do not expire.
 */
class ZkSemaphoreContractTest extends SemaphoreContract {
    private final String path = TestZk.newPath();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(TestZk.uri(path, "poll=60s"));
    }
}
