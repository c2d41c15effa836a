package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;

/** The backend contract on MariaDB (Debian's mariadbd started by the test, or INTERLOCK_IT_MARIADB_URL). */
class MariaDbContractIT extends LockSpaceContract {
    private final String url =
            TestServers.withOptions(TestServers.mariadbUrl(), "table=" + TestServers.table() + "&create=true");

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }
}
