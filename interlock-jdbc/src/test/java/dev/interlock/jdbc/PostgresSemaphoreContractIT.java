package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;

/** The semaphore contract on PostgreSQL (embedded, or INTERLOCK_IT_POSTGRES_URL), a table per test. */
class PostgresSemaphoreContractIT extends SemaphoreContract {
    private final String url =
            TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }
}
