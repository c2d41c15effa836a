package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;

/**
 * The registry on {@code redis:} (a Redis started by the test, or INTERLOCK_TEST_REDIS_URI), a key
 * prefix per test: the RedisLockRegistry migration path.
 */
class RedisRegistryIT extends RegistryContract {
    @Override
    protected LockSpace openSpace() {
        return Interlock.open(TestServers.redisUri());
    }
}
