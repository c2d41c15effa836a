package dev.interlock.redis;

import dev.interlock.spi.support.Barging;
import dev.interlock.spi.support.Secrets;
import dev.interlock.spi.support.UriOptions;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A parsed {@code redis://[[user]:password@]host[:port][/db][?option=value&...]} or
 * {@code rediss://...} (TLS) URI. Options: {@code prefix} (key prefix, default
 * {@value RedisKeys#DEFAULT_PREFIX}), {@code timeout} (connect and command timeout, default 2s),
 * {@code poll} (longest wait between a waiter's tries when no release notice comes, default 1s,
 * jittered), {@code pool} (connections, default 16), {@code barge} (how many times in a row a
 * writer may take back the lock its space has just released ahead of queued waiters, default
 * {@value Barging#DEFAULT}, 0 = strictly in turn; docs/redis.md). Without a password in the URI, the one in
 * {@code $REDISCLI_AUTH} is used, as redis-cli does, so that it need not appear in a command line.
 *
 * <p>{@link #toString()} and {@link #description()} never contain the user name or password.
 */
final class RedisLocation {
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
    static final Duration DEFAULT_POLL = Duration.ofSeconds(1);
    static final int DEFAULT_POOL = 16;
    static final String FORM =
            "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB][?prefix=P&timeout=2s&poll=1s&pool=16&barge=4] (rediss:// for TLS)";
    /** The options a redis URI takes. */
    static final List<String> OPTIONS = List.of("prefix", "timeout", "poll", "pool", "barge");

    final boolean tls;
    final String host;
    final int port;
    final int database;
    final String user;
    final String password;
    final String prefix;
    final Duration timeout;
    final Duration poll;
    final int pool;
    final int barge;

    private RedisLocation(
            boolean tls,
            String host,
            int port,
            int database,
            String user,
            String password,
            String prefix,
            Duration timeout,
            Duration poll,
            int pool,
            int barge) {
        this.tls = tls;
        this.host = host;
        this.port = port;
        this.database = database;
        this.user = user;
        this.password = password;
        this.prefix = prefix;
        this.timeout = timeout;
        this.poll = poll;
        this.pool = pool;
        this.barge = barge;
    }

    /**
     * @param env looks up environment variables ({@code REDISCLI_AUTH})
     * @throws IllegalArgumentException naming what is wrong and the expected form; the message
     *     never repeats the URI, which may hold a password
     */
    static RedisLocation parse(String text, UnaryOperator<String> env) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw malformed(text, e);
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("redis") && !scheme.equals("rediss")) {
            throw new IllegalArgumentException("not a redis URI; expected " + FORM);
        }
        String host = uri.getHost();
        if (host == null || host.isEmpty()) {
            throw new IllegalArgumentException("the redis URI names no host (or a malformed one); expected " + FORM);
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = uri.getPort() < 0 ? 6379 : uri.getPort();
        int db = 0;
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        if (!path.isEmpty() && !path.equals("/")) {
            try {
                db = Integer.parseInt(path.substring(1));
            } catch (NumberFormatException e) {
                db = -1;
            }
            if (db < 0) {
                throw new IllegalArgumentException(
                        "the path of a redis URI is the database number (e.g. /0), not '" + path + "'");
            }
        }
        String user = null;
        String password = null;
        String info = uri.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            String u = colon < 0 ? info : info.substring(0, colon);
            user = u.isEmpty() ? null : decode(u);
            password = colon < 0 ? null : decode(info.substring(colon + 1));
            if (colon < 0) {
                // redis://secret@host, as redis-cli and most clients read it: a password for the default user.
                password = user;
                user = null;
            }
        }
        if (password == null) {
            String fromEnv = env.apply("REDISCLI_AUTH");
            if (fromEnv != null && !fromEnv.isEmpty()) {
                password = fromEnv;
            }
        }
        String prefix = RedisKeys.DEFAULT_PREFIX;
        Duration timeout = DEFAULT_TIMEOUT;
        Duration poll = DEFAULT_POLL;
        int pool = DEFAULT_POOL;
        int barge = Barging.DEFAULT;
        Map<String, String> options = UriOptions.parse(uri.getRawQuery(), "redis:", OPTIONS, RedisLocation::decode);
        for (Map.Entry<String, String> option : options.entrySet()) {
            String key = option.getKey();
            String value = option.getValue();
            switch (key) {
                case "prefix":
                    prefix = RedisKeys.checkPrefix(value);
                    break;
                case "timeout":
                    timeout = UriOptions.duration(
                            "redis URI option ", key, value, Duration.ofMillis(10), Duration.ofMinutes(10));
                    break;
                case "poll":
                    poll = UriOptions.duration(
                            "redis URI option ", key, value, Duration.ofMillis(1), Duration.ofMinutes(10));
                    break;
                case "pool":
                    try {
                        pool = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        pool = -1;
                    }
                    if (pool < 2 || pool > 1024) {
                        throw new IllegalArgumentException(
                                "redis URI option pool must be a number of connections from 2 to 1024, was '" + value
                                        + "'");
                    }
                    break;
                default: // barge: the options are exactly these
                    barge = Barging.parse(value, "redis URI option ");
            }
        }
        return new RedisLocation(
                scheme.equals("rediss"), host, port, db, user, password, prefix, timeout, poll, pool, barge);
    }

    /**
     * What is wrong with a URI {@link URI} refuses, by where it is: in the options (after {@code ?},
     * where the character may be shown) or before them, where it may be part of a password (never
     * shown).
     */
    private static IllegalArgumentException malformed(String text, URISyntaxException e) {
        int query = text.indexOf('?');
        int at = e.getIndex();
        if (query >= 0 && at > query && at < text.length()) {
            char c = text.charAt(at);
            if (c == '{' || c == '}') {
                return new IllegalArgumentException(
                        "the key prefix in the redis URI contains a brace ('" + c + "'); Interlock puts the"
                                + " lock name between braces (a Redis Cluster hash tag), so the prefix may not have any: choose another prefix");
            }
            return new IllegalArgumentException("malformed redis URI: the character '" + c + "' in its options (index "
                    + at + ") must be percent-encoded; expected " + FORM);
        }
        return new IllegalArgumentException("malformed redis URI (" + e.getReason() + " at index " + at
                + "; characters such as @ : / in a password must be percent-encoded); expected " + FORM);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /**
     * The URI without credentials: {@code redis://****@host:port/db} (the mark only when some were
     * given), with the options that differ from the defaults.
     */
    String description() {
        StringBuilder sb = new StringBuilder(tls ? "rediss://" : "redis://");
        if (user != null || password != null) {
            sb.append(Secrets.MASK).append('@');
        }
        sb.append(host.indexOf(':') >= 0 ? "[" + host + "]" : host)
                .append(':')
                .append(port)
                .append('/')
                .append(database);
        String sep = "?";
        if (!prefix.equals(RedisKeys.DEFAULT_PREFIX)) {
            sb.append(sep).append("prefix=").append(prefix);
            sep = "&";
        }
        if (!timeout.equals(DEFAULT_TIMEOUT)) {
            sb.append(sep).append("timeout=").append(timeout.toMillis()).append("ms");
            sep = "&";
        }
        if (!poll.equals(DEFAULT_POLL)) {
            sb.append(sep).append("poll=").append(poll.toMillis()).append("ms");
            sep = "&";
        }
        if (pool != DEFAULT_POOL) {
            sb.append(sep).append("pool=").append(pool);
            sep = "&";
        }
        if (barge != Barging.DEFAULT) {
            sb.append(sep).append("barge=").append(barge);
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return description();
    }
}
