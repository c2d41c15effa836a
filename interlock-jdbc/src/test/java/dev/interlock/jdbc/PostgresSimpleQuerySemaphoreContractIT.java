package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;

/**
 * The semaphore contract on PostgreSQL with pgjdbc's simple query protocol, which sends the two
 * statements of a permit try as two transactions: the try finds that out and runs in an explicit
 * transaction instead (docs/jdbc.md, "Semaphores").
 */
class PostgresSimpleQuerySemaphoreContractIT extends SemaphoreContract {
    private final String url = TestServers.withOptions(
            TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true&preferQueryMode=simple");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }
}
