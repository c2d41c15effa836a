package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;
import java.util.UUID;

/** The backend contract on an in-memory H2 database, one per test. */
class H2ContractTest extends LockSpaceContract {
    private final String url =
            "jdbc:h2:mem:c" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1?create=true";

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(url);
    }

    @Override
    protected String uri() {
        return url; // the tests on fake time open their own space on it
    }
}
