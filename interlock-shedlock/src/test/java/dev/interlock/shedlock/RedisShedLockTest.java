package dev.interlock.shedlock;

import dev.interlock.testservers.RedisTestServer;

/**
 * ShedLock's provider contract on {@code redis:}: interlock-test-servers' Redis (or the one named by
 * {@code INTERLOCK_TEST_REDIS_URI}), each test under its own key prefix.
 */
class RedisShedLockTest extends ServerClockShedLockContract {
    private final String uri = RedisTestServer.shared().uri(RedisTestServer.newPrefix(), "");

    @Override
    protected String uri() {
        return uri;
    }
}
