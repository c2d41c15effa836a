package dev.interlock.mem;

import dev.interlock.spi.support.ChangeSignal;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One name of a {@link MemoryBackend} namespace: holders by owner id, the last token, and the
 * queue of waiting attempts, all guarded by the name's own {@link #lock}.
 */
final class Entry {
    final ReentrantLock lock = new ReentrantLock();
    /** Signalled on every change a waiter may care about; waiters wait on it without the lock. */
    final ChangeSignal changes = new ChangeSignal();

    final Map<String, Holder> holders = new LinkedHashMap<>(4);
    final ArrayDeque<MemoryBackend.MemAttempt> queue = new ArrayDeque<>(4);
    long token;
    /** Dropped from the namespace (never granted, nobody waiting): whoever locked it looks the name up again. */
    boolean removed;

    void changed() {
        changes.signal();
    }
}
