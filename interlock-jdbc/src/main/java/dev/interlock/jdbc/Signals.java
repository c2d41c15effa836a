package dev.interlock.jdbc;

import dev.interlock.spi.support.ChangeSignal;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Wake-ups for waiters, per name key: a release in this process, or a PostgreSQL notification
 * from any process, bumps the key's version; a waiter that read the version before its try
 * returns from {@link Signal#await} as soon as the version differs, so a release that lands
 * between the try and the wait is never missed.
 */
final class Signals {
    /** One per database and table in this JVM, so that every lock space on it wakes the others' waiters. */
    private static final ConcurrentHashMap<String, Signals> SHARED = new ConcurrentHashMap<>();

    private final ConcurrentHashMap<String, Signal> byKey = new ConcurrentHashMap<>();
    private final String database;
    private int spaces; // guarded by SHARED's compute

    private Signals(String database) {
        this.database = database;
    }

    /** The signals of {@code database} (a URL and table; never shown), shared until each user calls {@link #close}. */
    static Signals forDatabase(String database) {
        return SHARED.compute(database, (k, s) -> {
            Signals r = s != null ? s : new Signals(k);
            r.spaces++;
            return r;
        });
    }

    /** This user is done with them. */
    void close() {
        SHARED.computeIfPresent(database, (k, s) -> --s.spaces <= 0 ? null : s);
    }

    /** The signal of {@code key}, held until {@link #release}. */
    Signal acquire(String key) {
        return byKey.compute(key, (k, s) -> {
            Signal r = s != null ? s : new Signal(k);
            r.users++;
            return r;
        });
    }

    void release(Signal signal) {
        byKey.computeIfPresent(signal.key, (k, s) -> --s.users <= 0 ? null : s);
    }

    /** Something changed for {@code key}. */
    void bump(String key) {
        Signal s = byKey.get(key);
        if (s != null) {
            s.bump();
        }
    }

    /** Anything may have changed (a notification connection was re-established). */
    void bumpAll() {
        byKey.values().forEach(Signal::bump);
    }

    /**
     * A name's signal, and its line of writers waiting in this JVM. Only the first of the line
     * goes to the database while it waits (its tries and its place in the name's writer queue);
     * the others wait here for their turn, so a release wakes one try instead of one per waiting
     * thread, and a handoff between threads of this process costs the same few statements
     * whatever the number of waiting threads.
     */
    static final class Signal {
        final String key;
        int users; // guarded by the map's compute
        private final ChangeSignal changes = new ChangeSignal();
        private final ReentrantLock lineLock = new ReentrantLock();
        private final ArrayDeque<Object> line = new ArrayDeque<>(); // guarded by lineLock

        Signal(String key) {
            this.key = key;
        }

        /** {@code waiter} joins the end of the line. */
        void join(Object waiter) {
            lineLock.lock();
            try {
                line.addLast(waiter);
            } finally {
                lineLock.unlock();
            }
        }

        /** Is {@code waiter}, which has joined, first in line? */
        boolean first(Object waiter) {
            lineLock.lock();
            try {
                return line.peekFirst() == waiter;
            } finally {
                lineLock.unlock();
            }
        }

        /** {@code waiter} leaves the line; if it was first, the next one is woken for its turn. */
        void leave(Object waiter) {
            boolean next;
            lineLock.lock();
            try {
                boolean wasFirst = line.peekFirst() == waiter;
                next = line.remove(waiter) && wasFirst && !line.isEmpty();
            } finally {
                lineLock.unlock();
            }
            if (next) {
                bump();
            }
        }

        long version() {
            return changes.version();
        }

        void bump() {
            changes.signal();
        }

        /** Waits until the version differs from {@code seen} or {@code nanos} pass. */
        void await(long seen, long nanos) throws InterruptedException {
            changes.awaitChange(seen, nanos);
        }
    }
}
