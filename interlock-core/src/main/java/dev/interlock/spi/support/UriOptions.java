package dev.interlock.spi.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * The one reading of the options in a lock space URI's query
 * ({@code ?key=value&key2=value2}; a key alone has the value ""), shared by the backends, so that
 * each refuses an option it does not take, in the same words. A misspelt option must never be
 * ignored: {@code ?tabel=locks} would lock in another table than {@code ?table=locks}, and the
 * processes that spell it right would no longer exclude the others.
 *
 * <p>Keys are matched without regard to case and reported in the backend's spelling.
 */
public final class UriOptions {
    private UriOptions() {}

    /**
     * What {@link #parse} found.
     *
     * @param options the backend's options, by the backend's spelling of their names, in the order given
     * @param passedOn the {@code key=value} pairs left, as written, for another reader of the URI (a JDBC driver)
     */
    public record Parsed(Map<String, String> options, List<String> passedOn) {}

    /**
     * The options of {@code query} (the text after {@code ?}, or null), each value read by {@code decode}.
     *
     * @param scheme the backend's scheme with its colon ({@code "redis:"}), for messages
     * @param accepted the option names the backend takes
     * @throws IllegalArgumentException for an option not in {@code accepted}, naming the accepted
     *     ones (and the nearest if the name looks misspelt), or an option given twice
     */
    public static Map<String, String> parse(
            String query, String scheme, Collection<String> accepted, UnaryOperator<String> decode) {
        return parse(query, scheme, accepted, key -> false, null, decode).options();
    }

    /**
     * As {@link #parse(String, String, Collection, UnaryOperator)}, but a key that {@code passOn}
     * accepts (and the backend does not take) is left for another reader, as written.
     *
     * @param others what else takes options, for the message of an unknown one (e.g. "the JDBC driver
     *     (org.postgresql.Driver)"), or null
     */
    public static Parsed parse(
            String query,
            String scheme,
            Collection<String> accepted,
            Predicate<String> passOn,
            String others,
            UnaryOperator<String> decode) {
        Map<String, String> options = new LinkedHashMap<>();
        List<String> passed = new ArrayList<>();
        if (query == null || query.isEmpty()) {
            return new Parsed(options, passed);
        }
        for (String kv : query.split("&", -1)) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            String key = eq < 0 ? kv : kv.substring(0, eq);
            String name = spelling(key, accepted);
            if (name == null) {
                if (passOn.test(key)) {
                    passed.add(kv);
                    continue;
                }
                throw new IllegalArgumentException(unknown(key, scheme, accepted, others));
            }
            if (options.put(name, eq < 0 ? "" : decode.apply(kv.substring(eq + 1))) != null) {
                throw new IllegalArgumentException("the option '" + name + "' is given twice");
            }
        }
        return new Parsed(options, passed);
    }

    /**
     * The duration {@code value} of option {@code option}, in the grammar of the command line
     * ({@link Durations}: {@code 500ms}, {@code 2s}, {@code 1h30m}, {@code 2.5}), from {@code min}
     * to {@code max}, so that every scheme accepts the same words.
     *
     * @param where what the message starts with, naming the URI without secrets ({@code "redis URI option "})
     * @throws IllegalArgumentException saying what to write instead
     */
    public static Duration duration(String where, String option, String value, Duration min, Duration max) {
        Duration d;
        try {
            d = Durations.parse(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    where + option + " must be a duration (" + Durations.FORMS + "), was '" + value + "'");
        }
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new IllegalArgumentException(where + option + " must be between " + Durations.format(min) + " and "
                    + Durations.format(max) + ", was " + value);
        }
        return d;
    }

    /** The backend's spelling of {@code key}, or null if it takes no such option. */
    private static String spelling(String key, Collection<String> accepted) {
        for (String a : accepted) {
            if (a.equalsIgnoreCase(key)) {
                return a;
            }
        }
        return null;
    }

    /** "unknown option 'tabel' (did you mean 'table'?); jdbc: takes create=..., table=..." */
    static String unknown(String key, String scheme, Collection<String> accepted, String others) {
        StringBuilder sb = new StringBuilder("unknown option '").append(key).append('\'');
        String near = nearest(key, accepted);
        if (near != null) {
            sb.append(" (did you mean '").append(near).append("'?)");
        }
        sb.append("; ").append(scheme).append(' ');
        if (accepted.isEmpty()) {
            sb.append("takes no options");
        } else {
            List<String> names = new ArrayList<>();
            for (String a : new TreeSet<>(accepted)) {
                names.add(a + "=...");
            }
            sb.append("takes ").append(String.join(", ", names));
        }
        if (others != null) {
            sb.append(", and the options of ").append(others).append(", which has none of that name");
        }
        return sb.toString();
    }

    /** The accepted name within two edits of {@code key} (a typo), or null. */
    private static String nearest(String key, Collection<String> accepted) {
        String best = null;
        int bestDistance = 3;
        String k = key.toLowerCase(Locale.ROOT);
        for (String a : accepted) {
            int d = distance(k, a.toLowerCase(Locale.ROOT));
            if (d < bestDistance) {
                best = a;
                bestDistance = d;
            }
        }
        return best;
    }

    /** Edit distance, counting a swap of two neighbours as one edit ("tabel" is one from "table"). */
    private static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
