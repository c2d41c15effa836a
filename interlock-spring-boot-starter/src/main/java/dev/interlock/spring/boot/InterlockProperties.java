package dev.interlock.spring.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code interlock.*} properties of the Spring Boot starter. Each one maps to an option a
 * backend or adapter really has; the table in {@code docs/spring-boot.md} gives the mapping. A
 * value that the backend refuses fails start-up with a message that names the property
 * ({@link InterlockPropertyException}).
 */
@ConfigurationProperties(prefix = "interlock")
public class InterlockProperties {
    /**
     * The lock space: flock:/var/lock/app, dir:/mnt/shared/locks, jdbc:postgresql://db/app,
     * redis://cache:6379, mem:test. Bare "jdbc:" (or "jdbc:?table=app_locks"), or no URI at all,
     * takes the application's DataSource.
     */
    private String uri;

    /** Lease of lease-based backends when an acquisition does not give one. How long others wait after this process dies. */
    private Duration defaultLease = Duration.ofSeconds(30);

    private final Jdbc jdbc = new Jdbc();
    private final Redis redis = new Redis();
    private final Shedlock shedlock = new Shedlock();
    private final Registry registry = new Registry();
    private final Metrics metrics = new Metrics();
    private final Observations observations = new Observations();

    public String getUri() {
        return uri;
    }

    public void setUri(String uri) {
        this.uri = uri;
    }

    public Duration getDefaultLease() {
        return defaultLease;
    }

    public void setDefaultLease(Duration defaultLease) {
        this.defaultLease = defaultLease;
    }

    public Jdbc getJdbc() {
        return jdbc;
    }

    public Redis getRedis() {
        return redis;
    }

    public Shedlock getShedlock() {
        return shedlock;
    }

    public Registry getRegistry() {
        return registry;
    }

    public Metrics getMetrics() {
        return metrics;
    }

    public Observations getObservations() {
        return observations;
    }

    /** Options of jdbc: spaces (the URI's table= and create=). */
    public static class Jdbc {
        /** The lock table (its shared holders go in TABLE_shared). Default: interlock_locks. */
        private String table;

        /** Create the lock tables if they are missing. Off by default, so that a mistyped table name fails instead of making a second set of locks. */
        private Boolean createTable;

        public String getTable() {
            return table;
        }

        public void setTable(String table) {
            this.table = table;
        }

        public Boolean getCreateTable() {
            return createTable;
        }

        public void setCreateTable(Boolean createTable) {
            this.createTable = createTable;
        }
    }

    /** Options of redis: spaces (the URI's prefix=). */
    public static class Redis {
        /** Prefix of every key Interlock writes (default "interlock:"); no braces. */
        private String keyPrefix;

        public String getKeyPrefix() {
            return keyPrefix;
        }

        public void setKeyPrefix(String keyPrefix) {
            this.keyPrefix = keyPrefix;
        }
    }

    /** The ShedLock LockProvider. */
    public static class Shedlock {
        /**
         * Renew leases in the background while the task runs, instead of ShedLock's fixed
         * lockAtMostFor: a long task keeps its lock, and the lock frees lockAtMostFor after the
         * process dies. Default false (ShedLock's contract: a hung task loses the lock).
         */
        private boolean renewInBackground;

        public boolean isRenewInBackground() {
            return renewInBackground;
        }

        public void setRenewInBackground(boolean renewInBackground) {
            this.renewInBackground = renewInBackground;
        }
    }

    /** The Spring Integration LockRegistry. */
    public static class Registry {
        /** Time to live of registry locks that do not give one (default: interlock.default-lease). */
        private Duration timeToLive;

        /** Renew held locks in the background (default true); false gives Spring's JDBC registry behaviour (renewLock by hand). */
        private boolean renewInBackground = true;

        public Duration getTimeToLive() {
            return timeToLive;
        }

        public void setTimeToLive(Duration timeToLive) {
            this.timeToLive = timeToLive;
        }

        public boolean isRenewInBackground() {
            return renewInBackground;
        }

        public void setRenewInBackground(boolean renewInBackground) {
            this.renewInBackground = renewInBackground;
        }
    }

    /** Micrometer meters and observations share this bound on lock-name tags. */
    public static class Metrics {
        /** Record metrics in the application's MeterRegistry (default true when one exists). */
        private boolean enabled = true;

        /** Tag meters and observations with the first N lock names; later names share name=other. 0: no name tag. */
        private int tagNames = 20;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getTagNames() {
            return tagNames;
        }

        public void setTagNames(int tagNames) {
            this.tagNames = tagNames;
        }
    }

    /** Micrometer observations (traces) of waits and holds. */
    public static class Observations {
        /** Observe waits and holds in the application's ObservationRegistry (default true when one exists). */
        private boolean enabled = true;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
