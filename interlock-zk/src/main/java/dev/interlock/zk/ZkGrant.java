package dev.interlock.zk;

import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.support.Backoff;
import java.time.Duration;
import java.time.Instant;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * A held lock: this session's place at the head of the queue. It lives as long as the session
 * ({@link LeaseKind#SESSION}); the holder is told through the loss channel when the session ends
 * ({@link SessionKeeper}) or when its node is deleted by someone else (a watch on it, set at the
 * keeper's next look: a break).
 * Its token is the node's creation zxid.
 */
final class ZkGrant implements Grant, Watcher {
    private final ZkLockBackend backend;
    private final ZkSession session;
    private final AcquireSpec spec;
    private final String node;
    private final long token;
    private final Instant acquiredAt;
    private volatile boolean released;
    /** Set by the session keeper's thread only. */
    private boolean watching;

    ZkGrant(ZkLockBackend backend, ZkSession session, AcquireSpec spec, String node, long token, Instant acquiredAt) {
        this.backend = backend;
        this.session = session;
        this.spec = spec;
        this.node = node;
        this.token = token;
        this.acquiredAt = acquiredAt;
        if (!session.add(this)) {
            sessionEnded(session.whyEnded());
        } else {
            deadlineMoved();
        }
    }

    /**
     * Tells the core when this grant's session could end and when it will be declared lost
     * (the session's {@link SessionDeadline}), at the grant and whenever the session answers:
     * what {@code interlock run}'s sentinel is armed from, so that a stopped holder's command is
     * stopped at the loss point.
     */
    void deadlineMoved() {
        if (!released) {
            spec.lossChannel().sessionDeadline(session.deadline.lossPoint(), session.deadline.earliestExpiry());
        }
    }

    @Override
    public long token() {
        return token;
    }

    @Override
    public Instant acquiredAt() {
        return acquiredAt;
    }

    /**
     * Watches this grant's node, once, so that a delete by someone else (a break) is told at once.
     * The session keeper calls it at its next look after the grant, not the grant itself: a lock
     * held for less than that (most are) costs no watch, and a break is told within one look.
     */
    void watchOnce() {
        if (watching || released) {
            return;
        }
        watching = true;
        session.zk.exists(
                node,
                this,
                (rc, path, ctx, stat) -> {
                    // An exists() that finds no node answers NONODE (not OK with no stat): broken
                    // before this first look, so no watch was set and none will fire.
                    if (rc == KeeperException.Code.NONODE.intValue()) {
                        lost("its lock node " + node + " was deleted (broken)");
                    }
                },
                null);
    }

    /** The session ended: the lock is gone with it, or goes before anyone else can take it. */
    void sessionEnded(String why) {
        lost(why);
    }

    private void lost(String why) {
        if (!released) {
            spec.lossChannel().lost(why, null);
        }
    }

    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.NodeDeleted) {
            lost("its lock node " + node + " was deleted (broken)");
        }
    }

    @Override
    public void renew(Duration lease) {
        renew(lease, Long.MAX_VALUE);
    }

    /** Verifies the lock is still this grant's: the session lives and its node is still there, owned by it. */
    @Override
    public void renew(Duration lease, long timeoutNanos) {
        if (session.ended()) {
            throw backend.failures.lost(spec.name(), token, session.whyEnded(), null);
        }
        Stat st;
        try {
            st = session.zk.exists(node, false);
        } catch (KeeperException.SessionExpiredException e) {
            throw backend.failures.lost(spec.name(), token, "the ZooKeeper session expired", e);
        } catch (KeeperException e) {
            throw backend.failures.translate(spec.name(), "checking the lock", e);
        } catch (InterruptedException e) {
            throw backend.failures.interrupted(spec.name(), "checking the lock", e);
        }
        if (st == null || st.getEphemeralOwner() != session.id) {
            throw backend.failures.lost(
                    spec.name(), token, "its lock node " + node + " is gone (broken, or its session ended)", null);
        }
    }

    @Override
    public void release() {
        releaseIfOwned();
    }

    /**
     * Deletes the node, riding out a lost connection while the session lives (a server that died:
     * the client moves to another within a second or so); once the session has ended its nodes
     * go with it, and nothing of anyone else's can be touched. A release is the holder's cleanup
     * (a cancelled task's {@code finally}): an interrupt set before it does not stop it, and is
     * set again after it; one that comes during it does.
     */
    @Override
    public boolean releaseIfOwned() {
        released = true;
        session.remove(this);
        boolean interrupted = Thread.interrupted();
        try {
            return deleteNode();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean deleteNode() {
        Backoff pause = Backoff.exponential(Duration.ofMillis(50), Duration.ofMillis(500));
        while (true) {
            if (session.ended() && session.owned) {
                return false; // the session is closed: its nodes go with it
            }
            long seen = session.connection.version();
            try {
                session.zk.delete(node, -1);
                return true;
            } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
                return false;
            } catch (KeeperException e) {
                boolean connection = e.code() == KeeperException.Code.CONNECTIONLOSS
                        || e.code() == KeeperException.Code.OPERATIONTIMEOUT;
                if (connection && session.ended() && session.owned) {
                    return false; // it ended meanwhile: closed, its nodes go with it
                }
                if (!connection || session.ended()) {
                    session.deleteLater(node);
                    throw backend.failures.translate(spec.name(), "releasing", e);
                }
            } catch (InterruptedException e) {
                session.deleteLater(node);
                throw backend.failures.interrupted(spec.name(), "releasing", e);
            }
            try {
                session.connection.awaitChange(seen, pause.nextNanos());
            } catch (InterruptedException e) {
                session.deleteLater(node);
                throw backend.failures.interrupted(spec.name(), "releasing", e);
            }
        }
    }

    @Override
    public String toString() {
        return "ZkGrant[" + node + " token " + token + "]";
    }
}
