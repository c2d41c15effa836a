package dev.interlock.redis;

import dev.interlock.testkit.PermitHolderFaultContract;

/** A permit holder killed or stopped on {@code redis:}: its permit comes back after one lease, by the server's clock. */
class RedisPermitHolderFaultIT extends PermitHolderFaultContract {
    @Override
    protected String uri() {
        return TestRedis.shared().uri(TestRedis.newPrefix(), "");
    }
}
