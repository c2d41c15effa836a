package dev.interlock.spi.support;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one duration grammar of Interlock, the command line's and every backend's URI options
 * ({@code ?poll=}, {@code ?timeout=}): {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h},
 * {@code 2d}, combinations such as {@code 1h30m} or {@code 1m30.5s}, and plain seconds with an
 * optional decimal part such as {@code 2.5} (as {@code flock -w} takes them). A backend reads a
 * duration option with {@link UriOptions#duration}, so every scheme accepts the same words.
 */
public final class Durations {
    private static final Pattern PLAIN = Pattern.compile("\\d+(\\.\\d+)?|\\.\\d+");
    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d+)?|\\.\\d+)(ms|s|m|h|d)");
    private static final BigDecimal NANOS_PER_SECOND = BigDecimal.valueOf(1_000_000_000L);
    private static final BigDecimal MAX_NANOS = BigDecimal.valueOf(Long.MAX_VALUE);

    /** The forms accepted, for messages: "use e.g. 500ms, ...". */
    public static final String FORMS = "use e.g. 500ms, 30s, 5m, 1h, 1h30m, or seconds such as 2.5";

    private Durations() {}

    /**
     * The duration {@code text} says.
     *
     * @throws IllegalArgumentException naming the accepted forms if {@code text} is not a duration
     */
    public static Duration parse(String text) {
        String s = text.trim();
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty duration: " + FORMS);
        }
        BigDecimal nanos;
        if (PLAIN.matcher(s).matches()) {
            nanos = new BigDecimal(s).multiply(NANOS_PER_SECOND);
        } else {
            Matcher m = PART.matcher(s);
            int at = 0;
            nanos = BigDecimal.ZERO;
            while (at < s.length()) {
                if (!m.find(at) || m.start() != at) {
                    throw new IllegalArgumentException("'" + text + "' is not a duration: " + FORMS);
                }
                nanos = nanos.add(new BigDecimal(m.group(1)).multiply(unitNanos(m.group(2))));
                at = m.end();
            }
        }
        if (nanos.compareTo(MAX_NANOS) > 0) {
            throw new IllegalArgumentException("duration '" + text + "' is too long (the limit is about 292 years)");
        }
        return Duration.ofNanos(nanos.longValue());
    }

    private static BigDecimal unitNanos(String unit) {
        switch (unit) {
            case "ms":
                return BigDecimal.valueOf(1_000_000L);
            case "s":
                return NANOS_PER_SECOND;
            case "m":
                return BigDecimal.valueOf(60_000_000_000L);
            case "h":
                return BigDecimal.valueOf(3_600_000_000_000L);
            case "d":
                return BigDecimal.valueOf(86_400_000_000_000L);
            default:
                throw new IllegalArgumentException("unknown unit " + unit);
        }
    }

    /** Short human form for messages and tables: {@code 1h2m3s}, {@code 4.5s}, {@code 250ms}. */
    public static String format(Duration d) {
        if (d.isNegative()) {
            return "-" + format(d.negated());
        }
        long ms = d.toMillis();
        if (ms < 1000) {
            return ms + "ms";
        }
        long s = d.getSeconds();
        if (s < 60) {
            long tenths = (ms % 1000) / 100;
            return tenths == 0 ? s + "s" : s + "." + tenths + "s";
        }
        StringBuilder sb = new StringBuilder();
        long days = s / 86400;
        long h = (s % 86400) / 3600;
        long m = (s % 3600) / 60;
        long sec = s % 60;
        if (days > 0) {
            sb.append(days).append('d');
        }
        if (h > 0) {
            sb.append(h).append('h');
        }
        if (m > 0) {
            sb.append(m).append('m');
        }
        if (sec > 0 && days == 0) {
            sb.append(sec).append('s');
        }
        return sb.toString();
    }
}
