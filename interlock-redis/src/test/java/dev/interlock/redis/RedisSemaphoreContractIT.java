package dev.interlock.redis;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;

/**
 * The semaphore contract on a real Redis server, each test under its own key prefix. Leases run
 * on the server's clock, so the lease-expiry case runs on a short fixed lease in real time.
 */
class RedisSemaphoreContractIT extends SemaphoreContract {
    private final String prefix = TestRedis.newPrefix();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(TestRedis.shared().uri(prefix, ""));
    }
}
