package dev.interlock.jdbc;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Option;
import dev.interlock.Owner;
import dev.interlock.Ticker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.Secrets;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;

/**
 * The {@code jdbc:} backend: lease locks in a table of PostgreSQL, MySQL/MariaDB, H2 or SQLite,
 * for application instances that already share a database. See docs/jdbc.md for the schema, the
 * statements each operation costs and the guarantees.
 *
 * <p><b>Thread-safety:</b> thread-safe; one instance serves a whole lock space.
 *
 * <p><b>Connections:</b> its own, in autocommit mode, borrowed per operation from the given
 * {@link DataSource} or opened from the URL (a few are kept idle); never the caller's
 * transaction, and no session state (no advisory locks) is left on a pooled connection. On
 * PostgreSQL one more connection listens for releases, for the life of the backend.
 *
 * <p><b>Clocks:</b> every expiry is set and judged by the database's clock; this JVM's clocks only
 * time its own deadlines (a lease is believed valid for at most its duration from just before
 * the statement that granted or renewed it, which the database's expiry never precedes).
 *
 * <p><b>Crash:</b> a holder that dies frees the lock when its lease runs out by the database's
 * clock; its writer-queue place, if it had one, after at most 5s.
 *
 * @since 0.1
 */
public final class JdbcLockBackend implements LockBackend {
    private final String description;
    final BackendFailures failures;
    final LockStore store;
    final Signals signals;
    final Ticker ticker;
    final Clock clock;
    private final Connections connections;
    private final JdbcOptions options;
    private final PgListener listener;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcLockBackend(
            String description,
            String database,
            Connections connections,
            LockStore store,
            JdbcOptions options,
            Ticker ticker,
            Clock clock) {
        this.description = description;
        this.failures = new BackendFailures(description);
        this.signals = Signals.forDatabase(database + "#" + store.table.toLowerCase(Locale.ROOT));
        this.connections = connections;
        this.store = store;
        this.options = options;
        this.ticker = ticker;
        this.clock = clock;
        this.listener = store.dialect.notifies() && options.listen()
                ? new PgListener(connections, store.channel, signals, description)
                : null;
    }

    /**
     * A backend on connections from {@code dataSource} (usually the application's pool). Checks
     * at once that the database is supported and the lock table usable (creating it if the
     * options say so).
     *
     * @throws LockBackendException if the database cannot be reached, is not supported, or has no
     *     usable lock table; the message says what to fix
     */
    public static JdbcLockBackend create(DataSource dataSource, JdbcOptions options) {
        return create(dataSource, options, Ticker.system(), Clock.systemUTC());
    }

    /**
     * The typed option that opens a {@code jdbc:} space on an application's {@code DataSource}:
     * {@code Interlock.builder("jdbc:?table=app_locks").option(JdbcLockBackend.DATA_SOURCE, ds).open()}.
     * The URI then carries only Interlock's options.
     */
    public static final Option<DataSource> DATA_SOURCE = Option.of("jdbc.dataSource", DataSource.class);

    static JdbcLockBackend create(DataSource dataSource, JdbcOptions options, Ticker ticker, Clock clock) {
        return create(dataSource, options, ticker, clock, false);
    }

    /** As {@link #create(DataSource, JdbcOptions)}; with {@code createNothing}, a missing table is an error whatever the options say. */
    static JdbcLockBackend create(
            DataSource dataSource, JdbcOptions options, Ticker ticker, Clock clock, boolean createNothing) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(options, "options");
        String description = "jdbc:datasource(" + dataSource.getClass().getSimpleName() + ")?table=" + options.table();
        return start(
                description,
                "datasource@" + System.identityHashCode(dataSource),
                new Connections.FromDataSource(dataSource, networkTimeout(options)),
                options,
                ticker,
                clock,
                Secrets.of(null),
                createNothing);
    }

    /**
     * A backend on connections opened from a JDBC URL such as
     * {@code jdbc:postgresql://db/app?table=locks}; Interlock's options in the URL's query
     * ({@code table}, {@code create}, {@code poll}, {@code timeout}, {@code listen}) override
     * {@code options} and are not passed to the driver.
     *
     * @param properties driver properties such as {@code user} and {@code password} (may be empty)
     * @throws IllegalArgumentException if the URL is not a JDBC URL or an option is malformed
     * @throws LockBackendException if no driver accepts the URL, the database cannot be reached,
     *     is not supported, or has no usable lock table
     */
    public static JdbcLockBackend open(String url, Properties properties, JdbcOptions options) {
        return open(url, properties, options, Ticker.system(), Clock.systemUTC());
    }

    static JdbcLockBackend open(String url, Properties properties, JdbcOptions options, Ticker ticker, Clock clock) {
        return open(url, properties, options, ticker, clock, false);
    }

    /** As {@link #open(String, Properties, JdbcOptions)}; with {@code createNothing}, a missing table is an error whatever the URL says. */
    static JdbcLockBackend open(
            String url, Properties properties, JdbcOptions options, Ticker ticker, Clock clock, boolean createNothing) {
        Objects.requireNonNull(url, "url");
        if (!url.startsWith("jdbc:")) {
            throw new IllegalArgumentException(
                    "'" + JdbcUrls.mask(url) + "' is not a JDBC URL; use e.g. jdbc:postgresql://host/db");
        }
        JdbcUrls.Split split = JdbcUrls.split(url);
        Map<String, String> interlockOptions = new LinkedHashMap<>(split.options());
        String passwordFile = interlockOptions.remove("passwordFile");
        JdbcOptions o = options.with(interlockOptions);
        String description = JdbcUrls.mask(url);
        properties = Credentials.withPassword(split.driverUrl(), properties, passwordFile, System::getenv, description);
        Secrets secrets = Secrets.of(url).and(properties.getProperty("password"));
        try {
            Driver driver = DriverManager.getDriver(split.driverUrl());
            // A driver ignores a parameter it does not know: a misspelt ?tabel= must not lock in another table.
            JdbcUrls.split(
                    url,
                    JdbcUrls.takenBy(driver, split.driverUrl()),
                    driver.getClass().getName());
        } catch (SQLException e) {
            throw new BackendFailures(description)
                    .refused(
                            null,
                            "no JDBC driver on the class path accepts this URL;"
                                    + " add the driver's jar (org.postgresql:postgresql, org.mariadb.jdbc:mariadb-java-client, com.h2database:h2"
                                    + " or org.xerial:sqlite-jdbc)",
                            e);
        }
        Properties withTimeouts = connectTimeouts(split.driverUrl(), properties, o);
        Properties given = properties;
        return start(
                description,
                split.driverUrl(),
                new Connections.FromUrl(
                        split.driverUrl(),
                        withTimeouts,
                        ms -> connectTimeouts(split.driverUrl(), given, ms),
                        networkTimeout(o)),
                o,
                ticker,
                clock,
                secrets,
                createNothing);
    }

    /**
     * Bounds on opening a connection, for the drivers we know, unless the URL or the properties set
     * them: without them pgjdbc waits forever for a server that accepted the TCP connection but does
     * not answer (a paused or hung server), and a renewal would hang with it.
     */
    static Properties connectTimeouts(String driverUrl, Properties given, JdbcOptions o) {
        Properties p = new Properties();
        p.putAll(given);
        String lower = driverUrl.toLowerCase(Locale.ROOT);
        long seconds = Math.max(1, o.statementTimeout().toSeconds());
        if (lower.startsWith("jdbc:postgresql:")) {
            setUnlessGiven(p, lower, "loginTimeout", Long.toString(seconds));
            setUnlessGiven(p, lower, "connectTimeout", Long.toString(seconds));
            setUnlessGiven(p, lower, "socketTimeout", Long.toString(seconds + 5));
            // A statement's cancel holds the connection until the server acknowledges it; a paused
            // server never does, and pgjdbc's default of 10 s would hold the caller past a wait's end.
            setUnlessGiven(p, lower, "cancelSignalTimeout", "1");
        } else if (lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")) {
            setUnlessGiven(p, lower, "connectTimeout", Long.toString(seconds * 1000));
            setUnlessGiven(p, lower, "socketTimeout", Long.toString((seconds + 5) * 1000));
            allowMultiQueries(p, lower);
        }
        return p;
    }

    /**
     * As {@link #connectTimeouts(String, Properties, JdbcOptions)}, for a connection opened when the
     * caller's wait ends in {@code ms}: pgjdbc's login timeout (fractional seconds) bounds the
     * whole opening; MariaDB's connect and socket timeouts (ms) bound its steps. Settings the URL
     * or the properties give stay as given.
     */
    static Properties connectTimeouts(String driverUrl, Properties given, long ms) {
        Properties p = new Properties();
        p.putAll(given);
        String lower = driverUrl.toLowerCase(Locale.ROOT);
        if (lower.startsWith("jdbc:postgresql:")) {
            long seconds = Math.max(1, (ms + 999) / 1000);
            setUnlessGiven(p, lower, "loginTimeout", Double.toString(ms / 1000.0));
            setUnlessGiven(p, lower, "connectTimeout", Long.toString(seconds));
            setUnlessGiven(p, lower, "socketTimeout", Long.toString(seconds + 1));
            setUnlessGiven(p, lower, "cancelSignalTimeout", "1");
        } else if (lower.startsWith("jdbc:mariadb:") || lower.startsWith("jdbc:mysql:")) {
            setUnlessGiven(p, lower, "connectTimeout", Long.toString(ms));
            setUnlessGiven(p, lower, "socketTimeout", Long.toString(ms + SqlRunner.CUT_OFF_AFTER_MS));
            allowMultiQueries(p, lower);
        }
        return p;
    }

    /**
     * Lets MySQL/MariaDB take a permit's try and release as one text of statements each
     * ({@link MySqlSql}). Safe because every statement of the store binds its values as
     * parameters, which the driver escapes: no value can end a statement and begin another.
     */
    private static void allowMultiQueries(Properties p, String lowerUrl) {
        setUnlessGiven(p, lowerUrl, "allowMultiQueries", "true");
    }

    private static void setUnlessGiven(Properties p, String lowerUrl, String key, String value) {
        String k = key.toLowerCase(Locale.ROOT);
        boolean inUrl = lowerUrl.contains("?" + k + "=") || lowerUrl.contains("&" + k + "=");
        boolean inProps = p.stringPropertyNames().stream().anyMatch(n -> n.equalsIgnoreCase(key));
        if (!inUrl && !inProps) {
            p.setProperty(key, value);
        }
    }

    private static int networkTimeout(JdbcOptions o) {
        return (int) Math.min(Integer.MAX_VALUE, o.statementTimeout().toMillis() + 5000);
    }

    private static JdbcLockBackend start(
            String description,
            String database,
            Connections connections,
            JdbcOptions options,
            Ticker ticker,
            Clock clock,
            Secrets secrets,
            boolean createNothing) {
        LockStore store = null;
        try {
            Dialect dialect = detect(description, connections, secrets);
            store = new LockStore(
                    description, dialect, options.table(), connections, options.statementTimeout(), secrets);
            store.checkTables(options.createTable() && !createNothing, options.createTable() && createNothing);
            return new JdbcLockBackend(description, database, connections, store, options, ticker, clock);
        } catch (RuntimeException e) {
            if (store != null) {
                store.close();
            }
            connections.close();
            throw e;
        }
    }

    /** Connects once: which database is it, and may we write to it? */
    private static Dialect detect(String description, Connections connections, Secrets secrets) {
        SqlFailures sqlFailures = new SqlFailures(description, new Dialect.Postgres(), "", 0, secrets);
        Connections.Borrowed b;
        try {
            b = connections.borrow();
        } catch (SQLException e) {
            throw sqlFailures.map("connecting", null, e);
        }
        boolean broken = true;
        try {
            Connection c = b.connection;
            String product = c.getMetaData().getDatabaseProductName();
            Dialect d = Dialect.forProduct(product);
            if (d == null) {
                throw new BackendFailures(description)
                        .refused(
                                null,
                                product
                                        + " is not supported; the jdbc: backend works with PostgreSQL, MySQL, MariaDB, H2 and SQLite",
                                null);
            }
            String readOnly = d.readOnlyQuery();
            if (readOnly != null) {
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery(readOnly)) {
                    if (rs.next() && rs.getInt(1) == 1) {
                        throw new BackendFailures(description)
                                .refused(
                                        null,
                                        "the database is a read-only replica; point the URL at the writable primary",
                                        null);
                    }
                }
            }
            broken = false;
            return d;
        } catch (SQLException e) {
            throw sqlFailures.map("connecting", null, e);
        } finally {
            b.giveBack(broken);
        }
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public boolean leaseBased() {
        return true;
    }

    /**
     * Break by owner; tokens from a per-name counter that rows never lose; the queued writer is
     * shown; the waiters are the live places of the name's line; semaphores (docs/semaphores.md).
     */
    @Override
    public Set<Capability> capabilities() {
        return EnumSet.of(
                Capability.BREAK,
                Capability.STRICT_FENCING,
                Capability.QUEUE,
                Capability.WAITER_COUNT,
                Capability.SEMAPHORE);
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        if (listener != null) {
            listener.start();
        }
        return new JdbcAttempt(this, spec);
    }

    /** Do waiters mark rows as wanted, so that releases notify them? (PostgreSQL, while listening is on.) */
    boolean marksWaiters() {
        return listener != null;
    }

    /** Are PostgreSQL notifications of releases being received now? */
    boolean notified() {
        return listener != null && listener.listening();
    }

    /** The longest wait between tries that no notification ended. */
    long pollMillis() {
        return listener != null && listener.listening()
                ? Math.max(PgListener.FALLBACK_POLL_MS, options.poll().toMillis())
                : options.poll().toMillis();
    }

    @Override
    public LockInfo inspect(String name) {
        return store.inspect(name).map(this::info).orElseGet(() -> new LockInfo(name, List.of(), 0));
    }

    @Override
    public List<LockInfo> list() {
        List<LockInfo> out = new ArrayList<>();
        for (LockStore.State s : store.list()) {
            out.add(info(s));
        }
        return out;
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        boolean broken = store.breakLock(name, ownerId);
        if (broken) {
            signals.bump(NameKey.of(name));
        }
        return broken;
    }

    private LockInfo info(LockStore.State s) {
        Instant now = clock.instant();
        List<HolderInfo> holders = new ArrayList<>();
        for (LockStore.Holder h : s.holders()) {
            holders.add(holder(h, now));
        }
        // The line in order; the writer queued first leads it, and is shown even if it has no place in the line
        // (a process of an earlier Interlock, which keeps no line).
        List<HolderInfo> queued = new ArrayList<>();
        s.waiter()
                .filter(w -> s.line().stream().noneMatch(p -> p.owner().equals(w.owner())))
                .ifPresent(w -> queued.add(holder(w, now)));
        for (LockStore.Holder p : s.line()) {
            queued.add(holder(p, now));
        }
        return LockInfo.builder(s.name())
                .holders(holders)
                .waiters(s.line().size())
                .queued(queued)
                .limit(s.limit())
                .build();
    }

    /** Times from the database's clock, shown on this host's: now plus what the database says is left. */
    private static HolderInfo holder(LockStore.Holder h, Instant now) {
        String host = null;
        long pid = -1;
        try {
            Owner o = Owner.parse(h.owner());
            host = o.host();
            pid = o.pid();
        } catch (IllegalArgumentException e) {
            // an owner id written by something else: shown as it is
        }
        if (h.waiting()) {
            return new HolderInfo(
                    h.mode(),
                    Optional.of(h.owner()),
                    Optional.ofNullable(host),
                    pid,
                    Optional.empty(),
                    Optional.empty(),
                    OptionalLong.empty(),
                    Optional.of(Duration.ofMillis(h.leftMs())),
                    Optional.empty(),
                    true);
        }
        return new HolderInfo(
                h.mode(),
                Optional.of(h.owner()),
                Optional.ofNullable(host),
                pid,
                Optional.of(now.minusMillis(h.ageMs())),
                Optional.of(now.plusMillis(h.leftMs())),
                OptionalLong.of(h.token()),
                Optional.of(Duration.ofMillis(h.leaseMs())),
                Optional.empty(),
                false);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (listener != null) {
            listener.close();
        }
        signals.close();
        store.close();
        connections.close();
    }
}
