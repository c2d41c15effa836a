package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;
import java.util.UUID;

/** The semaphore contract on an in-memory H2 database, one per test. Leases run on the database's clock. */
class H2SemaphoreContractTest extends SemaphoreContract {
    private final String url =
            "jdbc:h2:mem:s" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1?create=true";

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }
}
