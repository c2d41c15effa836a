package dev.interlock.zk;

import dev.interlock.spi.support.UriOptions;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A parsed {@code zk://HOST[:PORT][,HOST[:PORT]...]/PATH[?session=10s&connect=10s&poll=1s]} URI:
 * the ensemble's addresses, the path under which the locks live (default {@value #DEFAULT_PATH}),
 * and the options. {@code session} is the session timeout asked of the servers (they may grant
 * another, between 2 and 20 of their ticks: the negotiated one counts), {@code connect} how long
 * opening waits for the ensemble, {@code poll} the longest wait between a waiter's tries when no
 * watch fires (a safety net, jittered).
 */
final class ZkLocation {
    static final String FORM = "zk://HOST[:PORT][,HOST[:PORT]...][/PATH][?session=10s&connect=10s&poll=1s]";
    static final String DEFAULT_PATH = "/interlock";
    static final int DEFAULT_PORT = 2181;
    static final Duration DEFAULT_SESSION = Duration.ofSeconds(10);
    static final Duration DEFAULT_CONNECT = Duration.ofSeconds(10);
    static final Duration DEFAULT_POLL = Duration.ofSeconds(1);
    static final List<String> OPTIONS = List.of("session", "connect", "poll");

    /** {@code host:port,host:port}, as the ZooKeeper client takes it (without a chroot: the path is ours). */
    final String ensemble;
    /** The space's root node, such as {@code /interlock}. */
    final String path;

    final Duration session;
    final Duration connect;
    final Duration poll;

    ZkLocation(String ensemble, String path, Duration session, Duration connect, Duration poll) {
        this.ensemble = ensemble;
        this.path = path;
        this.session = session;
        this.connect = connect;
        this.poll = poll;
    }

    /**
     * @param location what follows {@code zk:} in the URI
     * @throws IllegalArgumentException saying what is wrong and the expected form
     */
    static ZkLocation parse(String location) {
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
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? DEFAULT_PATH : rest.substring(slash);
        if (hosts.indexOf('@') >= 0) {
            throw bad(
                    "zk: takes no user or password in the URI (ZooKeeper authentication is not supported yet)",
                    "zk://" + hosts.substring(hosts.indexOf('@') + 1) + "/...");
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
        return new ZkLocation(ensemble, path, session, connect, poll);
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
        return new IllegalArgumentException("zk:" + location + " - " + what + "; expected " + FORM);
    }

    /** For messages: {@code zk://host:port,.../path}. */
    String description() {
        return "zk://" + ensemble + path;
    }
}
