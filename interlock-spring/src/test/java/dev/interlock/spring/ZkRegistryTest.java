package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testservers.ZkTestServer;

/**
 * The registry on {@code zk:}, a ZooKeeper server started by the test, a path per test: the
 * ZookeeperLockRegistry migration path. Its locks are kept by the session, not by a lease, so
 * the lease contract does not apply (as on {@code flock:}).
 */
class ZkRegistryTest extends RegistryContract {
    private final String uri = ZkTestServer.newUri("");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri);
    }
}
