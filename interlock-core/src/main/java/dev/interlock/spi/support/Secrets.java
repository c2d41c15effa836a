package dev.interlock.spi.support;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps passwords out of everything Interlock and its backends show. A lock space URI may carry
 * one ({@code jdbc:postgresql://app:s3cret@db/app}, {@code redis://:s3cret@cache},
 * {@code ...?password=s3cret}); {@link #mask} replaces it with {@code ****}, and {@link #scrub}
 * removes the raw values from any text (a driver's message that echoes the URL).
 */
public final class Secrets {
    /**
     * The patterns, compiled when a URI first needs them: a URI without '@' and without '=' (a
     * {@code flock:} or {@code dir:} path) matches neither, and compiling them costs a short
     * command's start a few milliseconds.
     */
    private static final class Patterns {
        /**
         * The password of a user-info part: {@code //user:PASSWORD@}, up to the last '@' before the
         * host (a raw '@' in the password is masked whole, not cut at its first '@').
         */
        static final Pattern USER_INFO = Pattern.compile("(//[^/@:?#;]*:)([^/?#]*)(@)");
        /** Oracle's thin form and the like, without {@code //}: {@code jdbc:oracle:thin:user/PASSWORD@host}. */
        static final Pattern SLASH_USER = Pattern.compile("(:[^/:@?#;]+/)([^@/?#;]*)(@)");
        /** Password-like parameters in a query ({@code ?a=b&password=x}) or a JDBC property list ({@code ;password=x}). */
        static final Pattern PARAM = Pattern.compile(
                "(?i)([?&;](?:[a-z0-9_.-]*(?:password|passwd|pwd|secret|token|credential|apikey|api_key)[a-z0-9_.-]*|pass|auth)=)([^&;#]*)");
    }

    /** What stands for a secret wherever Interlock shows a URI. */
    public static final String MASK = "****";

    /** False if {@code uri} cannot match either pattern: USER_INFO needs an '@', PARAM an '='. */
    private static boolean mayHoldSecrets(String uri) {
        return uri.indexOf('@') >= 0 || uri.indexOf('=') >= 0;
    }

    private final List<String> values;

    private Secrets(List<String> values) {
        this.values = values;
    }

    /** {@code uri} with every password-like value replaced by {@code ****}. */
    public static String mask(String uri) {
        if (uri == null || !mayHoldSecrets(uri)) {
            return uri;
        }
        String s = Patterns.USER_INFO.matcher(uri).replaceAll("$1" + MASK + "$3");
        s = Patterns.SLASH_USER.matcher(s).replaceAll("$1" + MASK + "$3");
        return Patterns.PARAM.matcher(s).replaceAll("$1" + MASK);
    }

    /** The secret values found in {@code uri}, raw and percent-decoded, to scrub from other text. */
    public static Secrets of(String uri) {
        List<String> found = new ArrayList<>();
        if (uri != null && mayHoldSecrets(uri)) {
            Matcher m = Patterns.USER_INFO.matcher(uri);
            while (m.find()) {
                add(found, m.group(2));
            }
            m = Patterns.SLASH_USER.matcher(uri);
            while (m.find()) {
                add(found, m.group(2));
            }
            m = Patterns.PARAM.matcher(uri);
            while (m.find()) {
                add(found, m.group(2));
            }
        }
        return new Secrets(List.copyOf(found));
    }

    private static void add(List<String> found, String value) {
        if (value.isEmpty() || value.equals(MASK)) {
            return;
        }
        found.add(value);
        try {
            String decoded = URLDecoder.decode(value.replace("+", "%2B"), StandardCharsets.UTF_8);
            if (!decoded.equals(value)) {
                found.add(decoded);
            }
        } catch (IllegalArgumentException e) {
            // not percent-encoded: the raw value is enough
        }
    }

    /** These secrets and {@code value} (a password given apart from the URI), if not null or empty. */
    public Secrets and(String value) {
        if (value == null || value.isEmpty()) {
            return this;
        }
        List<String> more = new ArrayList<>(values);
        add(more, value);
        return new Secrets(List.copyOf(more));
    }

    /** {@code text} with every secret value replaced by {@code ****}. */
    public String scrub(String text) {
        if (text == null || values.isEmpty()) {
            return text;
        }
        String s = text;
        for (String v : values) {
            s = s.replace(v, MASK);
        }
        return s;
    }

    /** True if there is nothing to scrub. */
    public boolean none() {
        return values.isEmpty();
    }
}
