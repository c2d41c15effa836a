package dev.interlock.jdbc;

import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Which names this space last saw held by other permits (or waited for), so that its next permit
 * try skips the all-back statement ({@link StandardSql#tryPermit}), which could not grant then and
 * would cost the try a statement (a round trip on PostgreSQL and MySQL/MariaDB) before the full
 * decision. A hint, never trusted: the full decision grants whatever the all-back statement would,
 * and every full decision says again whether others hold the name. Kept by hash bucket of the
 * name's key in a table of fixed size: a collision only sends a name the longer way until its next
 * full decision.
 */
final class PermitsInUse {
    private static final int BUCKETS = 1024;

    private final AtomicIntegerArray othersHold = new AtomicIntegerArray(BUCKETS);

    /** Whether the last full decision about the name of {@code key} (or a name of its bucket) found others holding it or waiting. */
    boolean byOthers(String key) {
        return othersHold.get(bucket(key)) != 0;
    }

    /**
     * What a full decision about the name of {@code key} found: others hold it or wait for it if
     * it did not grant, or if permits were in force, or if places in line came before the try's.
     */
    void decided(String key, boolean granted, boolean inForce, boolean placesAhead) {
        othersHold.set(bucket(key), !granted || inForce || placesAhead ? 1 : 0);
    }

    private static int bucket(String key) {
        return key.hashCode() & (BUCKETS - 1);
    }
}
