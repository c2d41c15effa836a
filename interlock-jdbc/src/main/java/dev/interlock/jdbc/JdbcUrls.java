package dev.interlock.jdbc;

import dev.interlock.spi.support.Secrets;
import dev.interlock.spi.support.UriOptions;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Driver;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Predicate;

/**
 * JDBC URLs as lock space locations: Interlock's own options are taken out of the query before
 * the URL reaches the driver, and passwords are masked wherever a URL is shown.
 */
final class JdbcUrls {
    /** Query parameters that belong to Interlock, not to the driver. */
    static final List<String> OPTIONS = List.of("table", "create", "listen", "poll", "timeout", "passwordFile");

    private JdbcUrls() {}

    /** A URL split into what goes to the driver and Interlock's options (by their names in {@link #OPTIONS}). */
    record Split(String driverUrl, Map<String, String> options) {}

    /**
     * Takes Interlock's options ({@link #OPTIONS}) out of the URL's {@code ?query}; every parameter
     * that {@code driverTakes} stays for the driver, in order.
     *
     * @param driver names the driver, for the message of an unknown parameter (null: no driver takes any)
     * @throws IllegalArgumentException for a parameter neither Interlock nor the driver takes: a
     *     driver ignores what it does not know, and a misspelt {@code ?tabel=} would lock in another table
     */
    static Split split(String url, Predicate<String> driverTakes, String driver) {
        int q = url.indexOf('?');
        if (q < 0) {
            return new Split(url, Map.of());
        }
        UriOptions.Parsed p = UriOptions.parse(
                url.substring(q + 1),
                "jdbc:",
                OPTIONS,
                driverTakes,
                driver == null ? null : "the JDBC driver (" + driver + ")",
                v -> URLDecoder.decode(v, StandardCharsets.UTF_8));
        String base = url.substring(0, q);
        return new Split(p.passedOn().isEmpty() ? base : base + "?" + String.join("&", p.passedOn()), p.options());
    }

    /**
     * {@link #split(String, Predicate, String)} that leaves every parameter not Interlock's to the
     * driver unchecked: for a URL whose driver is not known yet, and for tests.
     */
    static Split split(String url) {
        return split(url, key -> true, null);
    }

    /**
     * The parameters {@code driver} takes in {@code driverUrl}'s query, as it lists them
     * ({@link Driver#getPropertyInfo}), matched without regard to case; every parameter if it
     * cannot list them.
     */
    static Predicate<String> takenBy(Driver driver, String driverUrl) {
        DriverPropertyInfo[] info;
        try {
            info = driver.getPropertyInfo(driverUrl, new Properties());
        } catch (SQLException | RuntimeException e) {
            return key -> true; // it cannot say: its parameters pass unchecked
        }
        Set<String> names = new HashSet<>();
        for (DriverPropertyInfo p : info) {
            names.add(p.name.toLowerCase(Locale.ROOT));
        }
        return key -> names.contains(key.toLowerCase(Locale.ROOT));
    }

    /**
     * The URL with every password replaced by {@code ****}: for messages, logs and {@code status}.
     * The rule of every lock space URI ({@link Secrets#mask}), so that a URL for a driver that is
     * not installed is masked as carefully as one for a driver that is.
     */
    static String mask(String url) {
        return Secrets.mask(url);
    }
}
