package dev.interlock.shedlock;

import dev.interlock.testservers.PostgresServer;
import java.util.UUID;

/**
 * ShedLock's provider contract on {@code jdbc:} PostgreSQL: the server named by
 * {@code INTERLOCK_IT_POSTGRES_URL} ({@code jdbc:postgresql://db:5432/test?user=u&password=p}),
 * else interlock-test-servers' embedded one on a free loopback port; a table per test.
 */
class PostgresShedLockIT extends ServerClockShedLockContract {
    private final String uri = withTable(PostgresServer.sharedUrl());

    private static String withTable(String base) {
        return base + (base.contains("?") ? "&" : "?") + "table=s"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 20) + "&create=true";
    }

    @Override
    protected String uri() {
        return uri;
    }
}
