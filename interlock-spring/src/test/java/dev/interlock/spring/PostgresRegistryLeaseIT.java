package dev.interlock.spring;

/** The registry's lease contract on {@code jdbc:} over PostgreSQL (embedded, or INTERLOCK_IT_POSTGRES_URL). */
class PostgresRegistryLeaseIT extends RegistryLeaseContract {
    @Override
    protected String newUri() {
        return TestServers.postgresUri();
    }
}
