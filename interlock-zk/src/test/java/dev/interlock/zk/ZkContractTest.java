package dev.interlock.zk;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.BackendHooks;
import dev.interlock.testkit.LockSpaceContract;

/** The behaviour every backend shares, on an in-process ZooKeeper server, each test under its own path. */
class ZkContractTest extends LockSpaceContract {
    private final String path = TestZk.newPath();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return TestZk.uri(path, "");
    }

    /** A break from another session deletes the holder's node; its watch pushes the loss at once. */
    @Override
    protected BackendHooks hooks() {
        return new BackendHooks() {
            @Override
            public boolean pushLoss(Lease lease) {
                try (LockSpace admin = openSpace()) {
                    return admin.breakLock(lease.name(), lease.owner().id());
                }
            }
        };
    }
}
