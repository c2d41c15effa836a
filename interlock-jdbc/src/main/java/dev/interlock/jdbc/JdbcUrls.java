package dev.interlock.jdbc;

import dev.interlock.internal.Secrets;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * JDBC URLs as lock space locations: Interlock's own options are taken out of the query before
 * the URL reaches the driver, and passwords are masked wherever a URL is shown.
 */
final class JdbcUrls {
    /** Query parameters that belong to Interlock, not to the driver. */
    static final Set<String> OPTIONS = Set.of("table", "create", "listen", "poll", "timeout", "passwordfile");

    private JdbcUrls() {}

    /** A URL split into what goes to the driver and Interlock's options. */
    record Split(String driverUrl, Map<String, String> options) {}

    /**
     * Takes {@code table}, {@code create}, {@code listen}, {@code poll} and {@code timeout} out of
     * the URL's {@code ?query}; every other parameter stays for the driver, in order.
     */
    static Split split(String url) {
        int q = url.indexOf('?');
        if (q < 0) {
            return new Split(url, Map.of());
        }
        Map<String, String> options = new LinkedHashMap<>();
        List<String> kept = new ArrayList<>();
        for (String kv : url.substring(q + 1).split("&", -1)) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            String key = eq < 0 ? kv : kv.substring(0, eq);
            if (OPTIONS.contains(key.toLowerCase(Locale.ROOT))) {
                String value = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
                if (options.put(key.toLowerCase(Locale.ROOT), value) != null) {
                    throw new IllegalArgumentException("the option '" + key + "' appears twice in the URL");
                }
            } else {
                kept.add(kv);
            }
        }
        String base = url.substring(0, q);
        return new Split(kept.isEmpty() ? base : base + "?" + String.join("&", kept), options);
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
