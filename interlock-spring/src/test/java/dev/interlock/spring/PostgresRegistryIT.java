package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;

/** The registry on {@code jdbc:} over PostgreSQL (embedded, or INTERLOCK_IT_POSTGRES_URL), a table per test. */
class PostgresRegistryIT extends RegistryContract {
    @Override
    protected LockSpace openSpace() {
        return Interlock.open(TestServers.postgresUri());
    }
}
