package dev.interlock.jdbc;

import java.util.UUID;

/** {@link FencedWrites} on an in-memory H2 database. */
class H2FencedWritesTest extends FencedWritesContract {
    private final String url = "jdbc:h2:mem:f" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";

    @Override
    protected String driverUrl() {
        return url;
    }
}
