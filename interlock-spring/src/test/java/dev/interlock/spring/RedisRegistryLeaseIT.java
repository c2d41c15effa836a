package dev.interlock.spring;

/** The registry's lease contract on {@code redis:} (a Redis started by the test, or INTERLOCK_TEST_REDIS_URI). */
class RedisRegistryLeaseIT extends RegistryLeaseContract {
    @Override
    protected String newUri() {
        return TestServers.redisUri();
    }

    /** A break publishes a notice to the holder's process (docs/redis.md), which may arrive before unlock. */
    @Override
    protected boolean toldOfBreaks() {
        return true;
    }
}
