package dev.interlock.jdbc;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Properties;
import java.util.Set;

/**
 * Provides {@code jdbc:<driver URL>[?table=NAME&create=true&poll=DURATION&timeout=DURATION&listen=false]},
 * e.g. {@code jdbc:postgresql://db.internal/app?user=app&password=...}: the whole URI is the
 * JDBC URL, minus Interlock's own options. The driver must be on the class path.
 */
public final class JdbcBackendProvider implements LockBackendProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("jdbc");
    }

    @Override
    public String description() {
        return "lease locks in a SQL table (PostgreSQL, MySQL/MariaDB, H2, SQLite): jdbc:postgresql://host/db[?table=interlock_locks&create=true]";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return JdbcLockBackend.open("jdbc:" + config.location(), new Properties(), JdbcOptions.defaults(), config.ticker(), config.clock());
    }
}
