package dev.interlock.shedlock;

import java.util.UUID;

/** ShedLock's provider contract on {@code jdbc:}, an in-memory H2 database per test. */
class JdbcShedLockTest extends ServerClockShedLockContract {
    private final String uri =
            "jdbc:h2:mem:s" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1?create=true";

    @Override
    protected String uri() {
        return uri;
    }
}
