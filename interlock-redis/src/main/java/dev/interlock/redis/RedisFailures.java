package dev.interlock.redis;

import dev.interlock.LockBackendException;
import dev.interlock.spi.support.BackendFailures;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.function.Function;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

/**
 * Turns client failures into {@link LockBackendException}s whose message says what went wrong
 * and what to fix, in words: never a Java class name, never a credential (Redis error texts and
 * socket errors carry neither).
 */
final class RedisFailures {
    private RedisFailures() {}

    /**
     * @param description the lock space, for messages
     * @param name the lock concerned, or null
     * @param typeOf looks up the type of a key (for the wrong-type message); may fail
     */
    static LockBackendException translate(
            RuntimeException e, String description, String name, Function<String, String> typeOf) {
        BackendFailures f = new BackendFailures(description);
        JedisAccessControlException acl = find(e, JedisAccessControlException.class);
        if (acl != null) {
            return f.refused(name, access(acl.getMessage()), e);
        }
        if (e instanceof JedisRedirectionException) {
            return f.refused(
                    name,
                    "the server is a Redis Cluster node and the lock lives on another"
                            + " ('" + firstWord(e.getMessage())
                            + "'); a redis: URI names one server: open a cluster with"
                            + " RedisLocks.open(client) and a cluster client",
                    e);
        }
        if (e instanceof JedisDataException) {
            return data(e, f, name, typeOf);
        }
        return f.unreachable(name, "cannot reach the Redis server: " + connection(e), e);
    }

    private static LockBackendException data(
            RuntimeException e, BackendFailures f, String name, Function<String, String> typeOf) {
        String msg = e.getMessage() == null ? "" : e.getMessage();
        int at = msg.indexOf("INTERLOCK-WRONGTYPE ");
        if (at >= 0) {
            String key = msg.substring(at + "INTERLOCK-WRONGTYPE ".length()).trim();
            String type;
            try {
                type = typeOf.apply(key);
            } catch (RuntimeException ignored) {
                type = "value of another type";
            }
            return f.refused(
                    name,
                    "the key '" + key + "' holds a Redis " + type
                            + ", not an Interlock lock: another program uses these keys. Nothing was granted. Choose another prefix= for"
                            + " Interlock, or delete the key if it is debris",
                    e);
        }
        at = msg.indexOf("INTERLOCK-DAMAGED ");
        if (at >= 0) {
            String key = msg.substring(at + "INTERLOCK-DAMAGED ".length()).trim();
            return f.refused(
                    name,
                    "the key '" + key + "' holds entries Interlock did not"
                            + " write (another program changed it). Nothing was granted. Delete the key (its holders lose the lock) or"
                            + " choose another prefix=",
                    e);
        }
        String code = firstWord(msg).toUpperCase(Locale.ROOT);
        switch (code) {
            case LATE:
                return f.unreachable(
                        name,
                        "the Redis server ran the request only after this"
                                + " client had stopped waiting for its answer (was it paused or overloaded?); the request changed nothing"
                                + ", try again",
                        e);
            case "LOADING":
                return f.unreachable(name, "the Redis server is still loading its data; try again" + " shortly", e);
            case "BUSY":
                return f.unreachable(name, "the Redis server is busy running a long script; try" + " again shortly", e);
            case "TRYAGAIN":
            case "CLUSTERDOWN":
            case "MASTERDOWN":
                return f.unreachable(
                        name, "the Redis server cannot serve the lock now (" + msg + "); try again shortly", e);
            case "READONLY":
                return f.refused(name, "the server is a read-only replica; point the URI at the" + " primary", e);
            case "OOM":
                return f.unreachable(
                        name, "the Redis server is out of memory (maxmemory) and" + " refuses writes: " + msg, e);
            case "NOSCRIPT":
            case "NOPERM":
                return f.refused(name, access(msg), e);
            default:
                if (msg.contains("unknown command")
                        && msg.toLowerCase(Locale.ROOT).contains("eval")) {
                    return f.refused(
                            name,
                            "the server does not run Lua scripts (EVAL is"
                                    + " disabled or renamed); Interlock needs EVAL and EVALSHA",
                            e);
                }
                return f.refused(name, "the Redis server refused the command: " + msg, e);
        }
    }

    /** The error code of a script that found its deadline passed (ServerDeadlines): {@code INTERLOCK-LATE <server ms>}. */
    private static final String LATE = "INTERLOCK-LATE";

    /** The server's time in a refusal of a request that came too late ({@link ServerDeadlines}), or -1 if {@code e} is none. */
    static long lateAt(LockBackendException e) {
        JedisDataException data = find(e, JedisDataException.class);
        String msg = data == null || data.getMessage() == null ? "" : data.getMessage();
        if (!firstWord(msg).equals(LATE)) {
            return -1;
        }
        try {
            return Long.parseLong(msg.substring(LATE.length()).trim());
        } catch (NumberFormatException e2) {
            return -1;
        }
    }

    /** The message for an authentication or permission failure. */
    static String access(String msg) {
        String m = msg == null ? "" : msg;
        String code = firstWord(m).toUpperCase(Locale.ROOT);
        if (code.equals("WRONGPASS") || m.contains("invalid password") || m.contains("invalid username-password")) {
            return "authentication failed: the user name or password in the URI is wrong, or the user is disabled";
        }
        if (code.equals("NOAUTH")) {
            return "the Redis server requires a password: give it in the URI (redis://:PASSWORD@host, or"
                    + " redis://USER:PASSWORD@host with ACL users) or in $REDISCLI_AUTH";
        }
        if (m.contains("without any password configured") || m.contains("no password is set")) {
            return "the URI gives a password but the Redis server has none configured: remove it from the URI (or unset"
                    + " $REDISCLI_AUTH, if it came from there)";
        }
        if (code.equals("NOPERM")) {
            return "the Redis user lacks a permission Interlock needs (EVAL, EVALSHA, SCAN, SUBSCRIBE and the keys under its"
                    + " prefix): " + m;
        }
        return "the Redis server refused access: " + m;
    }

    /** Why a connection failed, in words. */
    static String connection(Throwable e) {
        if (find(e, UnknownHostException.class) != null) {
            return "unknown host (check the host name in the URI)";
        }
        if (find(e, ConnectException.class) != null || find(e, NoRouteToHostException.class) != null) {
            return "connection refused (is the server running, and on that port?)";
        }
        SSLHandshakeException hs = find(e, SSLHandshakeException.class);
        if (hs != null) {
            String m = hs.getMessage() == null ? "" : hs.getMessage();
            if (m.contains("PKIX") || m.contains("certification path")) {
                return "TLS: the server's certificate is not trusted; add its CA to the Java trust store"
                        + " (-Djavax.net.ssl.trustStore=...)";
            }
            if (m.contains("subject alternative") || m.contains("No name matching")) {
                return "TLS: the server's certificate does not name the host in the URI";
            }
            return "TLS handshake failed (is the server set up for TLS? use redis:// for a plain connection)";
        }
        if (find(e, SSLException.class) != null) {
            return "TLS failed: the server does not seem to speak TLS (use redis:// for a plain connection)";
        }
        SocketTimeoutException timeout = find(e, SocketTimeoutException.class);
        if (timeout != null && inTlsHandshake(timeout)) {
            return "no answer to the TLS handshake within the timeout (does the server speak TLS? use redis:// for a plain"
                    + " connection)";
        }
        if (timeout != null) {
            return "no answer within the timeout (the server is hung, overloaded or unreachable; timeout= sets how long to wait)";
        }
        String m = e.getMessage() == null ? "" : e.getMessage();
        if (m.contains("end of stream") || m.contains("Connection reset") || m.contains("Broken pipe")) {
            return "the server closed the connection (it stopped or restarted, killed this client, or it expects TLS: then use"
                    + " rediss://)";
        }
        if (m.contains("Could not get a resource")
                || m.contains("Pool not open")
                || m.contains("Timeout waiting for idle")) {
            return "no connection free in the pool within the timeout (pool= sets its size)";
        }
        return "connection failed"
                + (e instanceof JedisConnectionException && !m.isEmpty() && !m.contains("Exception")
                        ? " (" + m + ")"
                        : "");
    }

    private static boolean inTlsHandshake(Throwable t) {
        for (StackTraceElement f : t.getStackTrace()) {
            if (f.getClassName().startsWith("sun.security.ssl.")
                    || f.getClassName().startsWith("javax.net.ssl.")) {
                return true;
            }
        }
        return false;
    }

    private static String firstWord(String s) {
        if (s == null) {
            return "";
        }
        int sp = s.indexOf(' ');
        return sp < 0 ? s : s.substring(0, sp);
    }

    /** The first {@code type} among {@code e}, its causes and what they suppressed (Jedis keeps a refused connection there). */
    static <T extends Throwable> T find(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            for (Throwable s : t.getSuppressed()) {
                T found = find(s, type);
                if (found != null) {
                    return found;
                }
            }
        }
        return null;
    }
}
