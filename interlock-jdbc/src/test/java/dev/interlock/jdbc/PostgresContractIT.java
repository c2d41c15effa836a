package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;

/** The backend contract on PostgreSQL (embedded, or INTERLOCK_IT_POSTGRES_URL). */
class PostgresContractIT extends LockSpaceContract {
    private final String url =
            TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }

    @Override
    protected String uri() {
        return url; // the tests on fake time open their own space on it
    }
}
