package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.time.Duration;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Opens a lock space on an application's own {@link DataSource}, the usual case in an
 * application (a URI cannot carry a pool):
 *
 * <pre>{@code
 * try (LockSpace locks = JdbcLockSpaces.open(dataSource, JdbcOptions.builder().table("app_locks").build())) {
 *     try (Lease lease = locks.acquire("nightly-report", Duration.ofMinutes(5))) {
 *         write(report, lease.token());
 *     }
 * }
 * }</pre>
 *
 * The same through the core's builder: {@code Interlock.builder("jdbc:?table=app_locks")
 * .option(JdbcLockBackend.DATA_SOURCE, dataSource).open()}.
 *
 * The lock statements run on connections borrowed from the pool, in autocommit mode, never in
 * a transaction of the caller. On PostgreSQL one pooled connection stays borrowed for
 * LISTEN/NOTIFY while the space is open (turn it off with {@link JdbcOptions.Builder#listen}).
 *
 * @since 0.1
 */
public final class JdbcLockSpaces {
    private JdbcLockSpaces() {}

    /**
     * A lock space on {@code dataSource} with a default lease of 30s.
     *
     * @throws dev.interlock.LockBackendException if the database is unreachable, unsupported, or has no usable lock table
     */
    public static LockSpace open(DataSource dataSource, JdbcOptions options) {
        return open(JdbcLockBackend.create(dataSource, options), Duration.ofSeconds(30));
    }

    /** A lock space on a backend made by {@link JdbcLockBackend#create} or {@link JdbcLockBackend#open}. */
    public static LockSpace open(JdbcLockBackend backend, Duration defaultLease) {
        Objects.requireNonNull(backend, "backend");
        if (defaultLease.isNegative() || defaultLease.toMillis() < 100) {
            throw new IllegalArgumentException("default lease must be at least 100ms, was " + defaultLease);
        }
        return Interlock.builder(backend).defaultLease(defaultLease).open();
    }
}
