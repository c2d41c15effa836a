package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import javax.sql.DataSource;

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
        Optional<DataSource> ds = config.option(JdbcLockBackend.DATA_SOURCE);
        if (ds.isPresent()) {
            // jdbc:?table=... with the application's DataSource: the URI carries only Interlock's options.
            String loc = config.location();
            String query = loc.startsWith("?") ? loc.substring(1) : loc;
            if (!query.isEmpty() && loc.indexOf('?') != 0) {
                throw new IllegalArgumentException("'" + config.maskedUri()
                        + "': with a DataSource given, the URI carries only options," + " e.g. jdbc:?table=app_locks");
            }
            JdbcUrls.Split split;
            try {
                split = JdbcUrls.split("jdbc:x" + (query.isEmpty() ? "" : "?" + query), key -> false, null);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "'" + config.maskedUri() + "': with a DataSource given, only Interlock's options go in"
                                + " the URI: " + e.getMessage(),
                        e);
            }
            JdbcOptions o = JdbcOptions.defaults().with(split.options());
            return JdbcLockBackend.create(ds.get(), o, config.ticker(), config.clock(), createNothing(config));
        }
        return JdbcLockBackend.open(
                "jdbc:" + config.location(),
                new Properties(),
                JdbcOptions.defaults(),
                config.ticker(),
                config.clock(),
                createNothing(config));
    }

    private static boolean createNothing(BackendConfig config) {
        return config.option(Interlock.CREATE_NOTHING).orElse(false);
    }
}
