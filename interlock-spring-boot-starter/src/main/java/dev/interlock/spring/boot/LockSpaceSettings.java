package dev.interlock.spring.boot;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockMetrics;
import dev.interlock.LockSpace;
import dev.interlock.jdbc.JdbcLockBackend;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.springframework.util.ClassUtils;

/**
 * Turns the {@code interlock.*} properties into an opened {@link LockSpace}: checks each value,
 * adds the backend options given as properties ({@code interlock.jdbc.table} becomes the URI's
 * {@code table=}) to the URI, and opens it, on the application's {@code DataSource} where the URI
 * is a bare {@code jdbc:} or absent. Every refusal, here or by the backend, becomes an
 * {@link InterlockPropertyException} that names the properties involved.
 */
final class LockSpaceSettings {
    static final String URI = "interlock.uri";
    static final String DEFAULT_LEASE = "interlock.default-lease";
    static final String TABLE = "interlock.jdbc.table";
    static final String CREATE_TABLE = "interlock.jdbc.create-table";
    static final String KEY_PREFIX = "interlock.redis.key-prefix";
    static final String TAG_NAMES = "interlock.metrics.tag-names";
    static final String TIME_TO_LIVE = "interlock.registry.time-to-live";

    private final InterlockProperties properties;

    LockSpaceSettings(InterlockProperties properties) {
        this.properties = properties;
    }

    /** True if the URI says "the application's DataSource": absent, {@code jdbc:} or {@code jdbc:?options}. */
    static boolean wantsDataSource(String uri) {
        return uri == null || uri.isBlank() || uri.equals("jdbc:") || uri.startsWith("jdbc:?");
    }

    /**
     * Opens the space.
     *
     * @param dataSource the application's DataSource, or null if it has none
     * @param metrics what the space reports to ({@link LockMetrics#NONE} for nothing)
     */
    LockSpace open(DataSource dataSource, LockMetrics metrics) {
        checkPositive(DEFAULT_LEASE, properties.getDefaultLease());
        String given = properties.getUri();
        boolean onDataSource = wantsDataSource(given);
        if (onDataSource && dataSource == null) {
            throw new InterlockPropertyException(
                    URI,
                    URI + " is '" + given + "', which means the application's DataSource, but there is no"
                            + " DataSource bean",
                    "Give a whole URI in " + URI
                            + " (jdbc:postgresql://db/app, redis://cache:6379, dir:/mnt/shared/locks)"
                            + " or define a DataSource (spring.datasource.url).");
        }
        String base = given == null || given.isBlank() ? "jdbc:" : given.trim();
        List<String> involved = new ArrayList<>(List.of(URI));
        String uri = withOptions(base, involved);
        Interlock.Builder builder = Interlock.builder(uri)
                .defaultLease(properties.getDefaultLease())
                .metrics(metrics);
        if (onDataSource) {
            OnDataSource.use(builder, dataSource);
        }
        // The URI itself is not repeated here: it may carry a password, and the backends' messages show it masked.
        List<String> options = involved.subList(1, involved.size());
        String from = onDataSource
                ? "the application's DataSource (" + URI + " " + (given == null ? "absent" : "'" + given + "'") + ")"
                        + (options.isEmpty() ? "" : " with " + String.join(", ", options))
                : String.join(", ", involved);
        try {
            return builder.open();
        } catch (IllegalArgumentException e) {
            throw new InterlockPropertyException(
                    involved,
                    "Interlock refused the lock space given by " + from + ": " + e.getMessage(),
                    "Correct " + String.join(" or ", involved) + "; docs/spring-boot.md lists the forms.",
                    e);
        } catch (LockBackendException e) {
            throw new InterlockPropertyException(
                    involved,
                    "Interlock could not open the lock space given by " + from + ": " + e.getMessage(),
                    "Check that the backend is reachable and usable with these settings (server running, credentials, the lock"
                            + " table created or " + CREATE_TABLE + "=true).",
                    e);
        }
    }

    /** Kept apart so that {@code interlock-jdbc}'s classes are loaded only when a DataSource is used. */
    private static final class OnDataSource {
        static void use(Interlock.Builder builder, DataSource dataSource) {
            if (!ClassUtils.isPresent("dev.interlock.jdbc.JdbcLockBackend", LockSpaceSettings.class.getClassLoader())) {
                throw new InterlockPropertyException(
                        URI,
                        URI + " is absent or a bare jdbc:, which means the application's DataSource, but"
                                + " dev.interlock:interlock-jdbc is not on the class path",
                        "Add the dependency dev.interlock:interlock-jdbc, or give" + " another lock space in " + URI
                                + ".");
            }
            builder.option(JdbcLockBackend.DATA_SOURCE, dataSource);
        }
    }

    /** {@code base} with the options given as properties added to its query, each property that was used added to {@code involved}. */
    private String withOptions(String base, List<String> involved) {
        String scheme = scheme(base);
        String uri = base;
        InterlockProperties.Jdbc jdbc = properties.getJdbc();
        if (jdbc.getTable() != null) {
            uri = addOption(uri, scheme, "jdbc", TABLE, "table", jdbc.getTable(), involved);
        }
        if (jdbc.getCreateTable() != null) {
            uri = addOption(
                    uri,
                    scheme,
                    "jdbc",
                    CREATE_TABLE,
                    "create",
                    jdbc.getCreateTable().toString(),
                    involved);
        }
        String prefix = properties.getRedis().getKeyPrefix();
        if (prefix != null) {
            uri = addOption(
                    uri, scheme.equals("rediss") ? "redis" : scheme, "redis", KEY_PREFIX, "prefix", prefix, involved);
        }
        return uri;
    }

    private static String addOption(
            String uri,
            String scheme,
            String forScheme,
            String property,
            String option,
            String value,
            List<String> involved) {
        if (!scheme.equals(forScheme)) {
            throw new InterlockPropertyException(
                    property,
                    property + " applies to " + forScheme + ": lock spaces, but " + URI + " is a " + scheme + ": space",
                    "Remove " + property + ", or point " + URI + " at a " + forScheme + ": space.");
        }
        if (Pattern.compile("[?&]" + option + "=").matcher(uri).find()) {
            throw new InterlockPropertyException(
                    List.of(property, URI),
                    property + " is set and " + URI + " already has " + option + "=; say it once",
                    "Remove " + property + " or the " + option + "= option of " + URI + ".",
                    null);
        }
        involved.add(property);
        return uri + (uri.indexOf('?') >= 0 ? "&" : "?") + option + "="
                + URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    private static String scheme(String uri) {
        int colon = uri.indexOf(':');
        return colon <= 0 ? "" : uri.substring(0, colon).toLowerCase(Locale.ROOT);
    }

    /** {@code interlock.metrics.tag-names}, checked. */
    static int tagNames(InterlockProperties properties) {
        int names = properties.getMetrics().getTagNames();
        if (names < 0) {
            throw new InterlockPropertyException(
                    TAG_NAMES,
                    TAG_NAMES + " must be 0 or more, was " + names,
                    "Set " + TAG_NAMES + " to the number of lock names to tag (0: none).");
        }
        return names;
    }

    static void checkPositive(String property, Duration d) {
        if (d != null && (d.isNegative() || d.isZero())) {
            throw new InterlockPropertyException(
                    property,
                    property + " must be positive, was " + d,
                    "Set " + property + " to a positive duration such as 30s.");
        }
    }
}
