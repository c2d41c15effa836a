package dev.interlock.redis;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.LockSpaceContract;

/** The behaviour every backend shares, on a real Redis server, each test under its own key prefix. */
class RedisContractIT extends LockSpaceContract {
    private final String prefix = TestRedis.newPrefix();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return TestRedis.shared().uri(prefix, "");
    }

    /** A break by another process is pushed to the holder on its process's loss channel. */
    @Override
    protected dev.interlock.testkit.BackendHooks hooks() {
        return new dev.interlock.testkit.BackendHooks() {
            @Override
            public boolean pushLoss(dev.interlock.Lease lease) {
                // The holder subscribes to its loss channel asynchronously at the grant (a break before
                // that is found at the next renewal instead): break once the subscription is confirmed.
                RedisLockBackend backend = (RedisLockBackend) Spaces.backend(locks);
                String channel = backend.store.lostChannel(lease.owner().id());
                org.awaitility.Awaitility.await()
                        .atMost(java.time.Duration.ofSeconds(10))
                        .until(() -> backend.wakeups.subscribed(channel));
                try (LockSpace admin = openSpace()) {
                    return admin.breakLock(lease.name(), lease.owner().id());
                }
            }
        };
    }
}
