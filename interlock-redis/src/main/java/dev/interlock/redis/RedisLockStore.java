package dev.interlock.redis;

import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.spi.support.BackendFailures;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The lock operations of one key prefix on one Redis server, each a single Lua script (so each
 * is atomic and takes one round trip): {@link #acquire}, {@link #renew}, {@link #release},
 * {@link #leave}, {@link #inspect}, {@link #names}. Expiry is measured on the server only: its
 * {@code TIME} inside the scripts and its key TTLs. This layer knows nothing of the backend SPI.
 *
 * <p>Scripts run by {@code EVALSHA}, falling back to {@code EVAL} (which also caches the script)
 * when the server answers {@code NOSCRIPT}, e.g. after a restart. Every script is idempotent for
 * its owner, so one that failed on a stale pooled connection is sent once more on a fresh one.
 *
 * <p>Thread-safe, as the client is.
 */
final class RedisLockStore {
    /** An entry of a lock: a holder or a queued waiter, timed relative to the server's clock. */
    record Entry(
            String ownerId,
            Mode mode,
            boolean waiting,
            OptionalLong token,
            long leftMs,
            long leaseMs,
            long ageMs,
            int limit) {}

    /**
     * The outcome of {@link #acquire}: granted with a token (and whether it passed queued
     * waiters, by barging), or busy with who blocks it.
     */
    record Acquired(boolean granted, long token, boolean passed, List<Entry> blockers, long retryMs) {}

    /** The outcome of {@link #renew}: renewed, or gone (with the holders now). */
    record Renewed(boolean renewed, List<Entry> holders) {}

    /** What {@link #inspect} saw: live holders, queued waiters in order, the last token issued. */
    record Snapshot(List<Entry> holders, List<Entry> waiters, OptionalLong lastToken) {}

    /** A release: whether the grant was there, and the waiter it was handed to (null: none) with its token. */
    /**
     * @param fence for a permit whose release woke a waiter, the fence value it left (the mark a
     *     barging try of this process must find); null otherwise
     */
    record Released(boolean released, String handedTo, long handedToken, String fence) {}

    private final UnifiedJedis client;
    private final RedisKeys keys;
    private final String description;
    private final Runnable dropIdleConnections;
    private final ServerDeadlines deadlines;
    /** Told of each release notice a script of this store published: (channel, notice). */
    private volatile BiConsumer<String, String> published = (channel, notice) -> {};

    /**
     * @param dropIdleConnections called after a connection failure, before the one retry, so the
     *     retry does not take another connection that died with the same server (no-op for a
     *     client whose pool we do not own)
     */
    RedisLockStore(UnifiedJedis client, RedisKeys keys, String description, Runnable dropIdleConnections) {
        this(client, keys, description, dropIdleConnections, ServerDeadlines.NONE);
    }

    /**
     * @param deadlines the server time after which an acquire or renewal sent now must change
     *     nothing, because this client has stopped waiting for its answer (see {@link ServerDeadlines})
     */
    RedisLockStore(
            UnifiedJedis client,
            RedisKeys keys,
            String description,
            Runnable dropIdleConnections,
            ServerDeadlines deadlines) {
        this.client = Objects.requireNonNull(client, "client");
        this.keys = keys;
        this.description = description;
        this.dropIdleConnections = dropIdleConnections;
        this.deadlines = Objects.requireNonNull(deadlines, "deadlines");
    }

    /**
     * Hands each release notice that one of this store's scripts published to {@code listener}
     * as well, so that a waiter in this process is woken without the round trip through the
     * server's pub/sub.
     */
    void onPublished(BiConsumer<String, String> listener) {
        this.published = Objects.requireNonNull(listener, "listener");
    }

    RedisKeys keys() {
        return keys;
    }

    String description() {
        return description;
    }

    /**
     * One try: grants {@code name} to {@code ownerId}, or says who blocks it. With {@code queue},
     * a busy try also keeps the owner's place in the queue for {@code queueLeaseMs} (a waiting
     * writer keeps new readers out). A retry by an owner that already holds gets the same grant.
     */
    Acquired acquire(String name, Mode mode, String ownerId, long leaseMs, boolean queue, long queueLeaseMs) {
        return acquire(name, mode, ownerId, leaseMs, queue, queueLeaseMs, null);
    }

    /**
     * {@link #acquire(String, Mode, String, long, boolean, long)}, and with {@code bargeMark} (the
     * fence value this process's last release of the lock left, or null) a writer passes queued
     * waiters if the lock is free and still bears that value (docs/redis.md, "Bounded barging").
     */
    Acquired acquire(
            String name, Mode mode, String ownerId, long leaseMs, boolean queue, long queueLeaseMs, String bargeMark) {
        return acquire(name, mode, 0, ownerId, leaseMs, queue, queueLeaseMs, bargeMark);
    }

    /**
     * {@link #acquire(String, Mode, String, long, boolean, long, String)} for one permit of a
     * semaphore of {@code limit} (0: a plain lock; a permit is always exclusive, and barges as a writer does).
     *
     * @throws dev.interlock.LimitMismatchException if the holders state another limit (0: a plain lock)
     */
    Acquired acquire(
            String name,
            Mode mode,
            int limit,
            String ownerId,
            long leaseMs,
            boolean queue,
            long queueLeaseMs,
            String bargeMark) {
        List<Object> r = list(
                name,
                RedisScripts.ACQUIRE,
                inTime(
                        RedisScripts.ACQUIRE,
                        name,
                        6,
                        ownerId,
                        wireMode(mode, limit),
                        Long.toString(leaseMs),
                        queue ? "1" : "0",
                        Long.toString(queueLeaseMs),
                        bargeMark == null ? "" : bargeMark,
                        ""));
        if ("M".equals(str(r, 0))) {
            throw new BackendFailures(description).limitMismatch(name, Integer.parseInt(str(r, 1)), limit);
        }
        if ("G".equals(str(r, 0))) {
            deadlines.observed(Long.parseLong(str(r, 2)));
            return new Acquired(true, Long.parseLong(str(r, 1)), r.size() > 3 && "P".equals(str(r, 3)), List.of(), 0);
        }
        long now = Long.parseLong(str(r, 1));
        deadlines.observed(now);
        return new Acquired(false, 0, false, entries(r, 3, now), Math.max(0, Long.parseLong(str(r, 2))));
    }

    /** Compare-and-expire: extends the grant of {@code ownerId} with {@code token} to {@code leaseMs} from now. */
    Renewed renew(String name, String ownerId, long token, long leaseMs) {
        List<Object> r = list(
                name,
                RedisScripts.RENEW,
                inTime(RedisScripts.RENEW, name, 3, ownerId, Long.toString(token), Long.toString(leaseMs), ""));
        long now = Long.parseLong(str(r, 1));
        deadlines.observed(now);
        if ("R".equals(str(r, 0))) {
            return new Renewed(true, List.of());
        }
        return new Renewed(false, entries(r, 2, now));
    }

    /** Compare-and-delete: removes the grant of {@code ownerId} with {@code token}; true if it was there. */
    boolean release(String name, String ownerId, long token) {
        return run1(RedisScripts.RELEASE, name, ownerId, Long.toString(token), "");
    }

    /**
     * {@link #release(String, String, long)}, handing the lock (or the permit it frees) to the first
     * queued waiter if it is one of {@code candidates} (owner id and lease ms, in pairs: writers and
     * permit waiters of this process waiting for the lock; docs/redis.md, "Hand-off").
     */
    Released release(String name, String ownerId, long token, List<String> candidates) {
        if (candidates.isEmpty()) {
            return released(name, exec(RedisScripts.RELEASE, name, ownerId, Long.toString(token), ""));
        }
        String[] args = new String[4 + candidates.size()];
        args[0] = ownerId;
        args[1] = Long.toString(token);
        args[2] = "";
        args[3] = deadlines.forRequestSentNow(); // a release run after it frees the lock but hands it to nobody
        for (int i = 0; i < candidates.size(); i++) {
            args[4 + i] = candidates.get(i);
        }
        return released(name, exec(RedisScripts.RELEASE, name, args));
    }

    /** The release script's answer: handed over ('H'), a permit's fence ('F'), or {@link #done}. */
    private Released released(String name, Object r) {
        if (r instanceof List) {
            @SuppressWarnings("unchecked")
            List<Object> answer = (List<Object>) r;
            if ("H".equals(str(answer, 0))) {
                return new Released(true, str(answer, 1), Long.parseLong(str(answer, 2)), null);
            }
            if ("F".equals(str(answer, 0))) {
                published.accept(keys.channel(name), str(answer, 2));
                return new Released(true, null, 0, str(answer, 1));
            }
        }
        return new Released(done(name, r), null, 0, null);
    }

    /** Removes the grant of {@code ownerId} whatever its token (breaking a lock, or cleaning up an uncertain try). */
    boolean releaseAny(String name, String ownerId) {
        return run1(RedisScripts.RELEASE, name, ownerId, "", "");
    }

    /**
     * Breaks {@code ownerId}'s lock on {@code name} and, if it was there, tells its process on
     * its loss channel (see {@link RedisKeys#lostChannel}), in the same script.
     */
    boolean breakAndTell(String name, String ownerId) {
        return run1(RedisScripts.RELEASE, name, ownerId, "", keys.lostChannel(ownerId));
    }

    /** The loss channel of {@code ownerId}'s process. */
    String lostChannel(String ownerId) {
        return keys.lostChannel(ownerId);
    }

    /** Gives up the queued place of {@code ownerId}; true if it had one. */
    boolean leave(String name, String ownerId) {
        return run1(RedisScripts.LEAVE, name, ownerId);
    }

    /** Reads the lock without changing it. */
    Snapshot inspect(String name) {
        List<Object> r = run(RedisScripts.INSPECT, name);
        long now = Long.parseLong(str(r, 0));
        deadlines.observed(now);
        String fence = str(r, 1);
        List<Entry> all = entries(r, 2, now);
        List<Entry> holders = new ArrayList<>();
        List<Entry> waiters = new ArrayList<>();
        for (Entry e : all) {
            (e.waiting() ? waiters : holders).add(e);
        }
        holders.sort((a, b) ->
                a.mode() != b.mode() ? (a.mode() == Mode.EXCLUSIVE ? -1 : 1) : Long.compare(b.ageMs(), a.ageMs()));
        // The queue is served in arrival order (the oldest place first; ties by owner, as the scripts do).
        waiters.sort((a, b) -> a.ageMs() != b.ageMs()
                ? Long.compare(b.ageMs(), a.ageMs())
                : a.ownerId().compareTo(b.ownerId()));
        return new Snapshot(
                holders, waiters, fence.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(fence)));
    }

    /** Every lock name with a key under the prefix (held, queued for, or once acquired: its fence counter stays), sorted. */
    List<String> names() {
        TreeSet<String> out = new TreeSet<>();
        ScanParams params = new ScanParams().match(keys.scanPattern()).count(1000);
        String cursor = ScanParams.SCAN_POINTER_START;
        try {
            do {
                ScanResult<String> page = client.scan(cursor, params);
                for (String key : page.getResult()) {
                    keys.nameOf(key).ifPresent(out::add);
                }
                cursor = page.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        } catch (RuntimeException e) {
            throw translate(e, null);
        }
        return new ArrayList<>(out);
    }

    /** Checks that the server answers and accepts our credentials and scripts. */
    void ping() {
        try {
            client.ping();
            inspect("interlock-ping");
        } catch (LockBackendException e) {
            throw e;
        } catch (RuntimeException e) {
            throw translate(e, null);
        }
    }

    // ---------------------------------------------------------------- running scripts

    /** For release and leave: 0 (nothing done), 1 (done), or the notice published to wake a waiter (done). */
    private boolean run1(RedisScripts script, String name, String... args) {
        return done(name, exec(script, name, args));
    }

    private boolean done(String name, Object r) {
        if (r instanceof byte[] || r instanceof String) {
            String notice = r instanceof byte[] ? new String((byte[]) r, StandardCharsets.UTF_8) : (String) r;
            published.accept(keys.channel(name), notice);
            return true;
        }
        return r instanceof Long && (Long) r == 1L;
    }

    private List<Object> run(RedisScripts script, String name, String... args) {
        return list(name, script, exec(script, name, args));
    }

    /**
     * Runs a script whose {@code args[deadlineAt]} is its deadline (see {@link ServerDeadlines}),
     * set as it is sent. A script that finds it passed changes nothing and answers with the
     * server's time; that is normally an answer nobody reads (the client has given up), but one
     * read means only that the deadline was reckoned too early: the request goes once more, with
     * a deadline from the time in that answer.
     */
    private Object inTime(RedisScripts script, String name, int deadlineAt, String... args) {
        for (int sent = 1; ; sent++) {
            args[deadlineAt] = deadlines.forRequestSentNow();
            try {
                return exec(script, name, args);
            } catch (LockBackendException e) {
                long serverNow = RedisFailures.lateAt(e);
                if (serverNow < 0 || sent == 2) {
                    throw e;
                }
                deadlines.observed(serverNow);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private List<Object> list(String name, RedisScripts script, Object r) {
        if (!(r instanceof List)) {
            throw new BackendFailures(description)
                    .refused(
                            name,
                            "the server answered the "
                                    + script.name().toLowerCase(Locale.ROOT)
                                    + " script with something unexpected; is it a Redis server"
                                    + " (5.0 or later)?",
                            null);
        }
        return (List<Object>) r;
    }

    private Object exec(RedisScripts script, String name, String... args) {
        List<String> k = List.of(keys.lock(name), keys.fence(name));
        List<String> a = List.of(args);
        long start = System.nanoTime();
        try {
            return eval(script, k, a);
        } catch (JedisConnectionException e) {
            // A pooled connection may have died with a server that has since come back: one more try on a
            // fresh connection, unless this one waited for a timeout (the server is hung or gone) or was slow.
            if (RedisFailures.find(e, SocketTimeoutException.class) != null
                    || System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(500)) {
                throw translate(e, name);
            }
            dropIdleConnections.run();
            try {
                return eval(script, k, a);
            } catch (RuntimeException again) {
                throw translate(again, name);
            }
        } catch (RuntimeException e) {
            throw translate(e, name);
        }
    }

    private Object eval(RedisScripts script, List<String> k, List<String> a) {
        try {
            return client.evalsha(script.sha, k, a);
        } catch (JedisNoScriptException e) {
            return client.eval(script.source, k, a);
        } catch (JedisDataException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("NOSCRIPT")) {
                return client.eval(script.source, k, a);
            }
            throw e;
        }
    }

    private LockBackendException translate(RuntimeException e, String name) {
        if (e instanceof LockBackendException) {
            return (LockBackendException) e;
        }
        return RedisFailures.translate(e, description, name, client::type);
    }

    // ---------------------------------------------------------------- replies

    private static String str(List<Object> r, int i) {
        Object o = r.get(i);
        if (o instanceof byte[]) {
            return new String((byte[]) o, StandardCharsets.UTF_8);
        }
        return String.valueOf(o);
    }

    /** The mode as the scripts keep it: {@code EX} or {@code SH} for a lock, {@code P<N>} for a permit of N. */
    static String wireMode(Mode mode, int limit) {
        return limit > 0 ? "P" + limit : mode.shortName();
    }

    /** The semaphore limit of a mode the scripts keep: N for {@code P<N>}, 0 for a lock. */
    private static int limitOf(String wireMode) {
        return wireMode.startsWith("P") ? Integer.parseInt(wireMode.substring(1)) : 0;
    }

    private static Mode modeOf(String wireMode) {
        return wireMode.startsWith("P") ? Mode.EXCLUSIVE : Mode.parse(wireMode);
    }

    /** Field/value pairs from index {@code from}, as entries timed against the server's {@code now}. */
    private static List<Entry> entries(List<Object> r, int from, long now) {
        List<Entry> out = new ArrayList<>();
        for (int i = from; i + 1 < r.size(); i += 2) {
            String field = str(r, i);
            String[] v = str(r, i + 1).split(" ");
            String owner = field.substring(2);
            if (field.startsWith("h:") && v.length == 5) {
                long deadline = Long.parseLong(v[2]);
                out.add(new Entry(
                        owner,
                        modeOf(v[0]),
                        false,
                        OptionalLong.of(Long.parseLong(v[1])),
                        deadline - now,
                        Long.parseLong(v[3]),
                        now - Long.parseLong(v[4]),
                        limitOf(v[0])));
            } else if (field.startsWith("w:") && v.length == 3) {
                long deadline = Long.parseLong(v[1]);
                out.add(new Entry(
                        owner,
                        modeOf(v[0]),
                        true,
                        OptionalLong.empty(),
                        deadline - now,
                        -1,
                        now - Long.parseLong(v[2]),
                        limitOf(v[0])));
            }
        }
        return Collections.unmodifiableList(out);
    }
}
