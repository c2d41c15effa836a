package dev.interlock;

import dev.interlock.internal.DefaultLockSpace;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import dev.interlock.spi.support.Secrets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;

/**
 * Entry point: opens a {@link LockSpace} from a URI such as {@code flock:/var/lock/myapp} or
 * {@code dir:/mnt/shared/locks}. Backends are found with {@link ServiceLoader}; put the module of
 * a backend on the class path to enable its scheme.
 *
 * <pre>{@code
 * try (LockSpace locks = Interlock.open("flock:/var/lock/myapp")) {
 *     try (Lease lease = locks.acquire("nightly-report", Duration.ofMinutes(5))) {
 *         write(report, lease.token());
 *     }
 * }
 * }</pre>
 */
public final class Interlock {
    private Interlock() {}

    /**
     * The space is opened only to read it (and to break locks): the backend creates nothing, even
     * where its URI asks it to create what is missing ({@code jdbc:...?create=true}); a missing
     * table or directory is then an error that says nothing was created. The file backends create
     * nothing before the first lock anyway. {@code interlock status}, {@code list} and
     * {@code break} set it.
     */
    public static final Option<Boolean> CREATE_NOTHING = Option.of("createNothing", Boolean.class);

    /**
     * Opens a lock space with default options.
     *
     * @throws IllegalArgumentException if the URI is malformed or names no installed backend
     * @throws LockBackendException if the backend is unusable (missing directory that cannot be created, etc.)
     */
    public static LockSpace open(String uri) {
        return builder(uri).open();
    }

    /** Starts configuring a lock space: clocks and scheduler for tests, defaults for leases, typed options. */
    public static Builder builder(String uri) {
        return new Builder(Objects.requireNonNull(uri, "uri"), null);
    }

    /**
     * Starts configuring a lock space on a backend instance made by the caller (a backend's own
     * factory, for instance one taking the application's {@code DataSource}, or a wrapper of
     * another backend). The space closes the backend when it is closed. The backend keeps its own
     * clocks: {@link Builder#ticker} and {@link Builder#clock} then only affect the core's leases.
     */
    public static Builder builder(LockBackend backend) {
        return new Builder(null, Objects.requireNonNull(backend, "backend"));
    }

    /** Schemes of the backends found on the class path, each with a one-line description. */
    public static Map<String, String> availableSchemes() {
        Map<String, String> out = new TreeMap<>();
        for (LockBackendProvider p : ServiceLoader.load(LockBackendProvider.class, Interlock.class.getClassLoader())) {
            for (String s : p.schemes()) {
                out.put(s, p.description());
            }
        }
        return out;
    }

    /**
     * The providers of this project's own schemes, by class name. {@link #provider} loads one of
     * these directly when its module is on the class path: finding it through {@link ServiceLoader}
     * means reading every {@code META-INF/services} file of the class path and loading every
     * provider, which costs a command-line start several milliseconds. A scheme of this table is
     * therefore always served by this project's module; other schemes are found as before.
     */
    private static final Map<String, String> OWN_PROVIDERS = Map.of(
            "mem", "dev.interlock.mem.MemoryBackendProvider",
            "flock", "dev.interlock.file.flock.FlockBackendProvider",
            "dir", "dev.interlock.file.dir.DirBackendProvider",
            "jdbc", "dev.interlock.jdbc.JdbcBackendProvider",
            "redis", "dev.interlock.redis.RedisBackendProvider",
            "rediss", "dev.interlock.redis.RedisBackendProvider");

    /** The provider of {@code scheme} (lower case), or null if none is installed. */
    static LockBackendProvider provider(String scheme) {
        String own = OWN_PROVIDERS.get(scheme);
        if (own != null) {
            try {
                Class<?> c = Class.forName(own, true, Interlock.class.getClassLoader());
                if (LockBackendProvider.class.isAssignableFrom(c)) {
                    LockBackendProvider p =
                            (LockBackendProvider) c.getConstructor().newInstance();
                    if (p.schemes().contains(scheme)) {
                        return p;
                    }
                }
            } catch (ReflectiveOperationException | LinkageError | SecurityException e) {
                // not on the class path, or not readable from here (a module that does not open
                // the package): ServiceLoader's way below
            }
        }
        for (LockBackendProvider p : ServiceLoader.load(LockBackendProvider.class, Interlock.class.getClassLoader())) {
            if (p.schemes().contains(scheme)) {
                return p;
            }
        }
        return null;
    }

    /** Options of a lock space. Each setter may be called once. */
    public static final class Builder {
        private final String uri;
        private final LockBackend given;
        private final Map<Option<?>, Object> options = new HashMap<>();
        private Ticker ticker;
        private Clock clock;
        private ScheduledExecutorService scheduler;
        private Executor executor;
        private ThreadFactory threadFactory;
        private Duration defaultLease;
        private LockMetrics metrics;

        private Builder(String uri, LockBackend given) {
            this.uri = uri;
            this.given = given;
        }

        /**
         * A typed option for the backend (see the backend's documentation for the options it
         * reads, such as the {@code DataSource} of the {@code jdbc:} backend).
         */
        public <T> Builder option(Option<T> key, T value) {
            Objects.requireNonNull(key, "key");
            requireUnset(options.get(key), key.name());
            options.put(key, key.cast(Objects.requireNonNull(value, "value")));
            return this;
        }

        /** Monotonic time source for deadlines (default {@link Ticker#system()}). */
        public Builder ticker(Ticker ticker) {
            requireUnset(this.ticker, "ticker");
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /** Wall clock, for timestamps shown to people only (default {@link Clock#systemUTC()}). */
        public Builder clock(Clock clock) {
            requireUnset(this.clock, "clock");
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Times lease renewals and loss points; it never calls the backend itself (see
         * {@link #executor}). By default the space makes one daemon thread and shuts it down on
         * close; a scheduler given here is not shut down by the space.
         */
        public Builder scheduler(ScheduledExecutorService scheduler) {
            requireUnset(this.scheduler, "scheduler");
            this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
            return this;
        }

        /**
         * Runs backend calls made in the background (renewals, checks, the release after a loss)
         * and lost-lock listeners. By default the space keeps a small pool of daemon threads for
         * backend calls and another for listeners, so that calls hung on an unreachable backend
         * never delay a loss notice; an executor given here runs both (a direct or manual one makes
         * tests deterministic) and is not shut down by the space.
         */
        public Builder executor(Executor executor) {
            requireUnset(this.executor, "executor");
            this.executor = Objects.requireNonNull(executor, "executor");
            return this;
        }

        /** Makes the threads the space starts itself (default: daemon threads named {@code interlock-*}). */
        public Builder threadFactory(ThreadFactory threadFactory) {
            requireUnset(this.threadFactory, "threadFactory");
            this.threadFactory = Objects.requireNonNull(threadFactory, "threadFactory");
            return this;
        }

        /** Lease of lease-based backends when a request does not set one (default 30s). */
        public Builder defaultLease(Duration lease) {
            requireUnset(this.defaultLease, "defaultLease");
            if (lease.isNegative() || lease.isZero()) {
                throw new IllegalArgumentException("default lease must be positive, was " + lease);
            }
            this.defaultLease = lease;
            return this;
        }

        /**
         * Told of acquisitions (with their wait), timeouts, releases (with the hold time), renewal
         * failures and lost leases, for a metrics system ({@code interlock-micrometer}); default
         * {@link LockMetrics#NONE}, which costs nothing.
         */
        public Builder metrics(LockMetrics metrics) {
            requireUnset(this.metrics, "metrics");
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        private static void requireUnset(Object current, String what) {
            if (current != null) {
                throw new IllegalStateException(what + " was already set to " + current);
            }
        }

        /** Opens the space. See {@link Interlock#open(String)} for the exceptions. */
        public LockSpace open() {
            Ticker t = ticker != null ? ticker : Ticker.system();
            Clock c = clock != null ? clock : Clock.systemUTC();
            Duration lease = defaultLease != null ? defaultLease : Duration.ofSeconds(30);
            LockMetrics m = metrics != null ? metrics : LockMetrics.NONE;
            if (given != null) {
                return new DefaultLockSpace(
                        given, Secrets.mask(given.description()), t, c, scheduler, executor, threadFactory, lease, m);
            }
            String shown = Secrets.mask(uri);
            int colon = uri.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("lock space URI '" + shown + "' has no scheme; use one of "
                        + String.join(", ", availableSchemes().keySet()) + ", e.g. flock:/var/lock/myapp");
            }
            String scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
            BackendConfig config = BackendConfig.builder(uri)
                    .ticker(t)
                    .clock(c)
                    .defaultLease(lease)
                    .options(options)
                    .threadFactory(threadFactory)
                    .build();
            LockBackendProvider p = provider(scheme);
            if (p != null) {
                LockBackend backend = p.open(config);
                return new DefaultLockSpace(
                        backend, backend.description(), t, c, scheduler, executor, threadFactory, lease, m);
            }
            throw new IllegalArgumentException("no backend for scheme '" + scheme + ":' in '" + shown + "'; installed: "
                    + (availableSchemes().isEmpty()
                            ? "none (add interlock-file to the class path)"
                            : String.join(", ", availableSchemes().keySet())));
        }
    }
}
