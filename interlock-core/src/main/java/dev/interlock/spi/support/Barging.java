package dev.interlock.spi.support;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Bounded barging, the bookkeeping a backend keeps per lock space: a writer of this space may
 * take back the lock this space has just released, while nobody else has had it since, ahead of
 * queued waiters, at most a limit of times in a row. Each release leaves a <em>mark</em>
 * (what only the next grant changes: {@code dir:}'s free gate, {@code redis:}'s fence value), and
 * the backend lets a writer barge only if the lock still bears that mark.
 *
 * <p>Without it every cycle under contention is a hand-off to another process (a wake-up and a
 * round trip); with it a process that keeps coming back runs up to {@code limit} cycles at its own
 * speed, then must wait its turn, so no waiter is passed more than {@code limit} times in a row.
 * A hint for fairness, never safety: whether the lock is really free is decided by the backend's
 * atomic take. Thread-safe.
 */
public final class Barging {
    /** The default limit: on {@code dir:} most of the gain without a wider p99 (docs/benchmarks.md, "Bounded barging"). */
    public static final int DEFAULT = 4;
    /** The highest limit accepted. */
    private static final int MAX = 1000;

    private static final int MAX_NAMES = 100_000;

    private record Entry(String mark, int streak) {}

    private final int limit;
    private final ConcurrentHashMap<String, Entry> names = new ConcurrentHashMap<>();

    public Barging(int limit) {
        if (limit < 0 || limit > MAX) {
            throw new IllegalArgumentException("barge limit " + limit + " is not from 0 to " + MAX);
        }
        this.limit = limit;
    }

    /**
     * Parses the {@code barge} option of a space URI ({@code null}: the default).
     *
     * @param where what the message starts with, naming the URI or option without secrets
     * @throws IllegalArgumentException saying what to write instead
     */
    public static int parse(String value, String where) {
        if (value == null) {
            return DEFAULT;
        }
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > MAX) {
            throw new IllegalArgumentException(
                    where + "barge must be a whole number from 0 (strictly in turn) to " + MAX + ", was " + value);
        }
        return n;
    }

    /** A writer of this space released {@code name}, leaving the lock with {@code mark}. */
    public void released(String name, String mark) {
        if (limit == 0) {
            return;
        }
        if (names.size() > MAX_NAMES) {
            names.clear();
        }
        names.compute(name, (k, e) -> new Entry(mark, e == null ? 0 : e.streak()));
    }

    /** The mark this space's last release of {@code name} left, if a writer may still barge on it; otherwise null. */
    public String mark(String name) {
        if (limit == 0) {
            return null;
        }
        Entry e = names.get(name);
        return e != null && e.mark() != null && e.streak() < limit ? e.mark() : null;
    }

    /**
     * May a writer that found {@code name} still bearing {@code mark} (so nobody has held it since
     * this space released it) take it although waiters are queued? True, and counted, fewer than
     * the limit of times in a row.
     */
    public boolean barge(String name, String mark) {
        boolean[] ok = {false};
        names.computeIfPresent(name, (k, e) -> {
            if (e.mark() != null && e.mark().equals(mark) && e.streak() < limit) {
                ok[0] = true;
                return new Entry(null, e.streak() + 1);
            }
            return e;
        });
        return ok[0];
    }

    /** A writer of this space got {@code name} in its turn: the count of takes in a row starts again. */
    public void inTurn(String name) {
        if (limit > 0) {
            names.remove(name);
        }
    }
}
