package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;

/** The registry on {@code jdbc:}, an in-memory H2 database per test: the JdbcLockRegistry migration path. */
class JdbcRegistryTest extends RegistryContract {
    @Override
    protected LockSpace openSpace() {
        return Interlock.open(TestServers.h2Uri());
    }
}
