package dev.interlock.zk;

import dev.interlock.spi.support.ChangeSignal;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;

/**
 * One ZooKeeper session, the lease of every lock taken on it: its client handle, its
 * {@link SessionDeadline}, and the grants that live and die with it. Once {@link #end ended} (its
 * loss point passed, or the servers said it expired) it is never used for a lock again: its grants
 * were told, and the next acquisition opens a new session.
 */
final class ZkSession {
    final ZooKeeper zk;
    /** Made by this space (closed when it ends), or the application's (left open). */
    final boolean owned;

    final long id;
    final SessionDeadline deadline;
    /** Signalled at every change of the connection's state, and when the session ends. */
    final ChangeSignal connection = new ChangeSignal();

    private final Set<ZkGrant> grants = ConcurrentHashMap.newKeySet();
    private final AtomicReference<String> endedBecause = new AtomicReference<>();
    /** Place nodes whose delete found no connection: deleted when the session answers again. */
    private final Queue<String> undeleted = new ConcurrentLinkedQueue<>();

    ZkSession(ZooKeeper zk, boolean owned, SessionDeadline deadline) {
        this.zk = zk;
        this.owned = owned;
        this.id = zk.getSessionId();
        this.deadline = deadline;
    }

    boolean ended() {
        return endedBecause.get() != null;
    }

    /** Why it ended, for the holder's message; null while it lives. */
    String whyEnded() {
        return endedBecause.get();
    }

    /** Ties {@code g} to this session; false if it has ended (the caller reports the loss). */
    boolean add(ZkGrant g) {
        grants.add(g);
        if (ended()) {
            grants.remove(g);
            return false;
        }
        return true;
    }

    void remove(ZkGrant g) {
        grants.remove(g);
    }

    /** The session answered: tells every grant its new deadline ({@link ZkGrant#deadlineMoved}). */
    void deadlineMoved() {
        for (ZkGrant g : grants) {
            g.deadlineMoved();
        }
    }

    /** Watches the node of every grant that has none yet ({@link ZkGrant#watchOnce}). */
    void watchGrants() {
        for (ZkGrant g : grants) {
            g.watchOnce();
        }
    }

    /**
     * Ends the session for good and tells each of its grants, once.
     *
     * @return true if this call ended it
     */
    boolean end(String why) {
        if (!endedBecause.compareAndSet(null, why)) {
            return false;
        }
        connection.signal();
        for (ZkGrant g : grants) {
            g.sessionEnded(why);
        }
        grants.clear();
        return true;
    }

    /** Deletes {@code path} without waiting; one that finds no connection is tried again by {@link #retryDeletes()}. */
    void deleteLater(String path) {
        zk.delete(
                path,
                -1,
                (rc, p, ctx) -> {
                    if (rc == KeeperException.Code.CONNECTIONLOSS.intValue()
                            || rc == KeeperException.Code.OPERATIONTIMEOUT.intValue()) {
                        undeleted.add(p);
                    }
                },
                null);
    }

    /** Tries again the deletes that found no connection. */
    void retryDeletes() {
        String p;
        int n = undeleted.size();
        while (n-- > 0 && (p = undeleted.poll()) != null) {
            deleteLater(p);
        }
    }

    @Override
    public String toString() {
        return "session 0x" + Long.toHexString(id);
    }
}
