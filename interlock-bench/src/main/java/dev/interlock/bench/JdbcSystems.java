package dev.interlock.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.jdbc.JdbcLockSpaces;
import dev.interlock.jdbc.JdbcOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The lock systems of the jdbc: comparison, each on its own HikariCP pool of the same size on the
 * same PostgreSQL: Interlock {@code jdbc:}, ShedLock's JdbcTemplate provider, Spring
 * Integration's {@code JdbcLockRegistry}, and the raw one-statement lease floor.
 */
final class JdbcSystems {
    /** Every system gets a pool this large: 8 threads, plus Interlock's LISTEN connection, plus slack. */
    static final int POOL = 16;

    static final Duration LEASE = Duration.ofSeconds(30);

    private JdbcSystems() {}

    /** The systems by name, as the harnesses' command lines give them. */
    static LockSystem open(String kind, String url) throws SQLException {
        switch (kind) {
            case "interlock":
                return interlock(url);
            case "shedlock":
                return shedlock(url, 0);
            case "shedlock-100ms":
                return shedlock(url, 100);
            case "spring":
                return spring(url);
            case "floor":
                return floor(url, 0);
            default:
                throw new IllegalArgumentException("unknown jdbc system '" + kind
                        + "'; known: interlock, shedlock, shedlock-100ms, spring, floor");
        }
    }

    static HikariDataSource pool(String url, String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(POOL);
        c.setMinimumIdle(POOL);
        c.setPoolName(name);
        c.setAutoCommit(true);
        return new HikariDataSource(c);
    }

    static void execute(String url, String... sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            for (String s : sql) {
                st.execute(s);
            }
        }
    }

    /** Interlock on the application's pool ({@link JdbcLockSpaces#open}), LISTEN/NOTIFY wake-ups on. */
    static LockSystem interlock(String url) {
        return interlock(url, 0);
    }

    /** {@link #interlock(String)}, each locker taking one permit of a semaphore of {@code limit} (0: the lock). */
    static LockSystem interlock(String url, int limit) {
        HikariDataSource ds = pool(url, "interlock");
        LockSpace locks = JdbcLockSpaces.open(
                ds,
                JdbcOptions.builder().table("bench_interlock").createTable(true).build());
        return new LockSystem() {
            @Override
            public String label() {
                return limit > 0 ? "Interlock jdbc: limit(" + limit + ")" : "Interlock jdbc:";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    Lease lease;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        lease = limit > 0
                                ? locks.lock(name).limit(limit).lease(LEASE).acquire()
                                : locks.lock(name).lease(LEASE).acquire();
                    }

                    @Override
                    public void release() {
                        lease.close();
                    }
                };
            }

            @Override
            public void close() {
                locks.close();
                ds.close();
            }
        };
    }

    /**
     * ShedLock 7's JdbcTemplate provider with {@code usingDbTime()} (its one-statement PostgreSQL
     * form, {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE lock_until <= now}). ShedLock has no
     * wait: a busy lock is skipped, so the locker tries again, at once or after {@code retryMillis}.
     */
    static LockSystem shedlock(String url, long retryMillis) throws SQLException {
        execute(
                url,
                "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL,"
                        + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)");
        HikariDataSource ds = pool(url, "shedlock");
        JdbcTemplateLockProvider provider =
                new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
                        .withJdbcTemplate(new JdbcTemplate(ds))
                        .usingDbTime()
                        .build());
        return ShedLockSystem.of("JdbcTemplate", provider, LEASE, retryMillis, ds::close);
    }

    /**
     * Spring Integration 7's {@code JdbcLockRegistry} on a {@code DefaultLockRepository}, as a
     * Spring context would wire it (its own transaction manager on the pool). {@code lock()}
     * waits by itself: a local {@code ReentrantLock} per name in this JVM, then the table, tried
     * again every 100 ms ({@code idleBetweenTries}, its default).
     */
    static LockSystem spring(String url) throws SQLException {
        execute(
                url,
                "CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                        + " CLIENT_ID CHAR(36), CREATED_DATE TIMESTAMP NOT NULL, EXPIRED_AFTER TIMESTAMP NOT NULL,"
                        + " CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))");
        HikariDataSource ds = pool(url, "spring");
        DefaultLockRepository repo = new DefaultLockRepository(ds);
        repo.setTransactionManager(new DataSourceTransactionManager(ds));
        repo.afterPropertiesSet();
        repo.afterSingletonsInstantiated();
        repo.start();
        JdbcLockRegistry registry = new JdbcLockRegistry(repo, LEASE);
        return new LockSystem() {
            @Override
            public String label() {
                return "Spring Integration JdbcLockRegistry";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    Lock held;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        Lock l = registry.obtain(name);
                        l.lockInterruptibly();
                        held = l;
                    }

                    @Override
                    public void release() {
                        held.unlock();
                    }
                };
            }

            @Override
            public void close() {
                repo.stop();
                repo.close();
                ds.close();
            }
        };
    }

    /**
     * The floor: the cheapest correct lease lock, one statement to take and one to give back, on a
     * connection of its own per thread with both statements prepared once. Take:
     * {@code INSERT ... ON CONFLICT (name) DO UPDATE ... WHERE expires_at <= now()} (one row changed:
     * ours); give back: {@code DELETE ... WHERE name = ? AND owner = ?}. A unique owner per
     * acquisition, the database's clock; no token, no shared mode, no renewal, no wake-ups: a
     * waiter tries again at once.
     */
    static LockSystem floor(String url, long retryMillis) throws SQLException {
        execute(
                url,
                "CREATE TABLE IF NOT EXISTS bench_floor (name VARCHAR(1024) NOT NULL PRIMARY KEY, owner VARCHAR(64) NOT NULL,"
                        + " expires_at TIMESTAMPTZ NOT NULL)");
        AtomicLong owners = new AtomicLong();
        String process = UUID.randomUUID().toString().substring(0, 8);
        return new LockSystem() {
            @Override
            public String label() {
                return "raw floor (INSERT ON CONFLICT / DELETE)";
            }

            @Override
            public Locker newLocker() throws SQLException {
                Connection c = DriverManager.getConnection(url);
                PreparedStatement take = c.prepareStatement("INSERT INTO bench_floor AS f (name, owner, expires_at)"
                        + " VALUES (?, ?, now() + make_interval(secs => ?)) ON CONFLICT (name) DO UPDATE"
                        + " SET owner = excluded.owner, expires_at = excluded.expires_at WHERE f.expires_at <= now()");
                PreparedStatement give = c.prepareStatement("DELETE FROM bench_floor WHERE name = ? AND owner = ?");
                return new Locker() {
                    String name;
                    String owner;

                    @Override
                    public void acquire(String n) throws SQLException, InterruptedException {
                        String o = process + ":" + owners.incrementAndGet();
                        take.setString(1, n);
                        take.setString(2, o);
                        take.setLong(3, TimeUnit.MILLISECONDS.toSeconds(LEASE.toMillis()));
                        while (take.executeUpdate() != 1) {
                            LockSystem.pause(retryMillis);
                        }
                        name = n;
                        owner = o;
                    }

                    @Override
                    public void release() throws SQLException {
                        give.setString(1, name);
                        give.setString(2, owner);
                        if (give.executeUpdate() != 1) {
                            throw new IllegalStateException("floor: lost " + name);
                        }
                    }

                    @Override
                    public void close() throws SQLException {
                        c.close();
                    }
                };
            }

            @Override
            public void close() {}
        };
    }
}
