package dev.interlock.redis;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
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
}
