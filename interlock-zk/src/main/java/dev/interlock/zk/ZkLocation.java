package dev.interlock.zk;

import dev.interlock.spi.support.PasswordFile;
import dev.interlock.spi.support.Secrets;
import dev.interlock.spi.support.UriOptions;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A parsed {@code zk://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...]/PATH[?session=10s&connect=10s&poll=1s]}
 * URI: the ZooKeeper digest user and password (percent-encoded in the URI; without a password in
 * it, the first line of the file named by {@code passwordFile=PATH}, else {@value #PASSWORD_ENV}),
 * the ensemble's addresses, the path under which the locks
 * live (default {@value #DEFAULT_PATH}), and the options. {@code session} is the session timeout asked of the servers (they may grant
 * another, between 2 and 20 of their ticks: the negotiated one counts), {@code connect} how long
 * opening waits for the ensemble, {@code poll} the longest wait between a waiter's tries when no
 * watch fires (a safety net, jittered).
 *
 * <p>The password appears in no message: {@link #description()} masks it, and a refused URI is
 * quoted masked.
 */
final class ZkLocation {
    static final String FORM =
            "zk://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/PATH][?session=10s&connect=10s&poll=1s&passwordFile=PATH]";
    /** Where the password of {@code zk://USER@...} comes from, so that it need not be on a command line. */
    static final String PASSWORD_ENV = "INTERLOCK_ZK_PASSWORD";

    static final String DEFAULT_PATH = "/interlock";
    static final int DEFAULT_PORT = 2181;
    static final Duration DEFAULT_SESSION = Duration.ofSeconds(10);
    static final Duration DEFAULT_CONNECT = Duration.ofSeconds(10);
    static final Duration DEFAULT_POLL = Duration.ofSeconds(1);
    static final List<String> OPTIONS = List.of("session", "connect", "poll", "passwordFile");

    /** {@code host:port,host:port}, as the ZooKeeper client takes it (without a chroot: the path is ours). */
    final String ensemble;
    /** The space's root node, such as {@code /interlock}. */
    final String path;
    /** The digest user, or null: the session is not authenticated and the nodes are open to all. */
    final String user;
    /** The digest password, or null when {@link #user} is. */
    final String password;

    final Duration session;
    final Duration connect;
    final Duration poll;

    ZkLocation(
            String ensemble,
            String path,
            String user,
            String password,
            Duration session,
            Duration connect,
            Duration poll) {
        this.ensemble = ensemble;
        this.path = path;
        this.user = user;
        this.password = password;
        this.session = session;
        this.connect = connect;
        this.poll = poll;
    }

    /**
     * @param location what follows {@code zk:} in the URI
     * @param env looks up environment variables ({@value #PASSWORD_ENV})
     * @throws IllegalArgumentException saying what is wrong and the expected form, the password masked
     */
    static ZkLocation parse(String location, UnaryOperator<String> env) {
        if (!location.startsWith("//")) {
            throw bad("the ensemble's addresses must follow zk://", location);
        }
        String rest = location.substring(2);
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        if (slash >= 0 && rest.indexOf('@', slash) >= 0 || query != null && query.indexOf('@') >= 0) {
            // Not quoted: if it ends a user:password, a '/' or '?' in that password cut it short.
            throw new IllegalArgumentException("the zk URI has an '@' after its server addresses (the URI is not"
                    + " repeated: it may hold a password): characters such as / ? @ in a password must be"
                    + " percent-encoded (%2F %3F %40), and a path may not contain '@'; expected " + FORM);
        }
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? DEFAULT_PATH : rest.substring(slash);
        String user = null;
        String password = null;
        int at = hosts.lastIndexOf('@');
        if (at >= 0) {
            String info = hosts.substring(0, at);
            hosts = hosts.substring(at + 1);
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon), "user", location);
            password = colon < 0 ? null : decode(info.substring(colon + 1), "password", location);
            if (user.isEmpty()) {
                throw bad("a password needs its user name: zk://USER:PASSWORD@HOST", location);
            }
            if (password != null && password.isEmpty()) {
                throw bad("the password of the user " + user + " is empty", location);
            }
        }
        String ensemble = ensemble(hosts, location);
        path = path(path, location);
        Map<String, String> options;
        try {
            options = UriOptions.parse(query, "zk:", OPTIONS, v -> URLDecoder.decode(v, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
            throw bad(e.getMessage(), location);
        }
        String where = "zk URI option ";
        Duration session = options.containsKey("session")
                ? UriOptions.duration(
                        where, "session", options.get("session"), Duration.ofMillis(100), Duration.ofMinutes(10))
                : DEFAULT_SESSION;
        Duration connect = options.containsKey("connect")
                ? UriOptions.duration(
                        where, "connect", options.get("connect"), Duration.ofMillis(100), Duration.ofHours(1))
                : DEFAULT_CONNECT;
        Duration poll = options.containsKey("poll")
                ? UriOptions.duration(where, "poll", options.get("poll"), Duration.ofMillis(10), Duration.ofMinutes(10))
                : DEFAULT_POLL;
        String passwordFile = options.get("passwordFile");
        if (passwordFile != null && (user == null || password != null)) {
            throw bad(
                    user == null
                            ? "passwordFile= needs a user: zk://USER@HOST/PATH?passwordFile=PATH"
                            : "the URI has a password and a passwordFile; give one of them",
                    location);
        }
        if (user != null && password == null) {
            password = passwordFile != null
                    ? PasswordFile.read(Path.of(passwordFile), description(user, ensemble, path))
                    : env.apply(PASSWORD_ENV);
            if (password == null || password.isEmpty()) {
                throw bad(
                        "the user " + user + " has no password: give it as zk://" + user
                                + ":PASSWORD@HOST (percent-encoded), in a file named by passwordFile=PATH, or in $"
                                + PASSWORD_ENV,
                        location);
            }
        }
        return new ZkLocation(ensemble, path, user, password, session, connect, poll);
    }

    private static String decode(String s, String what, String location) {
        try {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw bad("the " + what + " has a malformed %-escape (write % itself as %25)", location);
        }
    }

    private static String ensemble(String hosts, String location) {
        if (hosts.isEmpty()) {
            throw bad("no ZooKeeper server given", location);
        }
        List<String> out = new ArrayList<>();
        for (String h : hosts.split(",", -1)) {
            if (h.isEmpty()) {
                throw bad("an empty server address in '" + hosts + "'", location);
            }
            String host = h;
            int port = DEFAULT_PORT;
            int colon = h.lastIndexOf(':');
            if (colon >= 0 && h.indexOf(']') < colon) {
                host = h.substring(0, colon);
                try {
                    port = Integer.parseInt(h.substring(colon + 1));
                } catch (NumberFormatException e) {
                    port = -1;
                }
                if (port < 1 || port > 65535) {
                    throw bad("the port of '" + h + "' must be a number from 1 to 65535", location);
                }
            }
            if (host.isEmpty()) {
                throw bad("the server address '" + h + "' has no host", location);
            }
            out.add(host + ":" + port);
        }
        return String.join(",", out);
    }

    private static String path(String path, String location) {
        if (path.equals("/")) {
            throw bad(
                    "the locks need a path of their own, not the root node: e.g. zk://host:2181" + DEFAULT_PATH,
                    location);
        }
        if (path.endsWith("/")) {
            throw bad("the path must not end with '/'", location);
        }
        for (String segment : path.substring(1).split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                throw bad("the path '" + path + "' has an empty, '.' or '..' part", location);
            }
        }
        if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
            throw bad("/zookeeper is ZooKeeper's own subtree: choose another path, e.g. " + DEFAULT_PATH, location);
        }
        return path;
    }

    private static IllegalArgumentException bad(String what, String location) {
        return new IllegalArgumentException(Secrets.mask("zk:" + location) + " - " + what + "; expected " + FORM);
    }

    /** For messages: {@code zk://host:port,.../path}, or {@code zk://user:****@host:port,.../path}. */
    String description() {
        return description(user, ensemble, path);
    }

    private static String description(String user, String ensemble, String path) {
        return "zk://" + (user == null ? "" : user + ":" + Secrets.MASK + "@") + ensemble + path;
    }
}
