package dev.interlock.spring;

/** The registry's lease contract on {@code jdbc:}, an in-memory H2 database per test. */
class JdbcRegistryLeaseTest extends RegistryLeaseContract {
    @Override
    protected String newUri() {
        return TestServers.h2Uri();
    }
}
