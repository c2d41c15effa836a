package dev.interlock.zk;

import dev.interlock.HolderInfo;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.ChangeSignal;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * One acquisition: a place in the lock's queue (an ephemeral sequential node), taken at the first
 * try and kept while the caller waits, which is what serves waiters in arrival order and keeps new
 * readers out once a writer waits. A try lists the queue; if something blocks the place, a waiter
 * watches the one node it waits for ({@link ZkNodes#watched}) and a single try gives the place up.
 *
 * <p>The first try sends the create and the listing together (ZooKeeper answers a session's
 * requests in order, so the listing sees the new node): one round trip. A create whose answer was
 * lost is found again by the attempt's random id in the node's name.
 *
 * <p>A waiter blocked by one place only, told by its watch that this place was deleted, holds
 * without listing again: places are only ever added behind it, so nothing else can be ahead of it.
 * That takes a round trip off every hand-off (the release's delete, its watch event, the grant).
 */
final class ZkAttempt implements Attempt, Watcher {
    private final ZkLockBackend backend;
    private final AcquireSpec spec;
    private final String lockPath;
    private final String id = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    private final ChangeSignal changes = new ChangeSignal();
    private final Backoff poll;
    private long seen;
    /** The session of {@link #node}. */
    private ZkSession session;
    /** The full path of this attempt's place, or null. */
    private String node;

    private long czxid;
    /** A create's answer was lost: the place may exist, under this attempt's id. */
    private boolean maybeCreated;

    private boolean granted;
    private List<ZkNodes.Place> queue = List.of();
    private volatile List<ZkNodes.Place> blockedBy = List.of();
    /** The path of a node this attempt watched, deleted (set by the client's event thread). */
    private volatile String deleted;

    ZkAttempt(ZkLockBackend backend, AcquireSpec spec) {
        this.backend = backend;
        this.spec = spec;
        this.lockPath = backend.lockPath(spec.name());
        this.poll = Backoff.fixed(backend.loc.poll);
    }

    /**
     * One try. A single try (no wait) is not stopped by an interrupt set before it, as
     * {@code Lock.tryLock()} is not, and keeps it: the ZooKeeper client's blocking calls would
     * otherwise refuse at once on an interrupted thread. A waiting acquisition is interruptible.
     */
    @Override
    public Optional<Grant> tryAcquire() {
        if (spec.waits()) {
            return tryOnce();
        }
        boolean interrupted = Thread.interrupted();
        try {
            return tryOnce();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Optional<Grant> tryOnce() {
        seen = changes.version();
        ZkSession s = backend.keeper.session();
        if (session != s) { // the place of an ended session went, or goes, with it
            if (node != null && session != null && !session.owned) {
                deleteNow(s, node); // the application's client keeps its session: the old place would stay in the queue
            }
            node = null;
            maybeCreated = false;
            session = s;
        }
        if (node != null && onlyBlockerDeleted()) {
            return grant(s);
        }
        List<String> children;
        try {
            if (node == null && !maybeCreated) {
                children = createAndList(s, true);
            } else {
                children = s.zk.getChildren(lockPath, false);
                if (node == null && !findLostCreate(s, children)) {
                    children = createAndList(s, true);
                }
            }
        } catch (KeeperException e) {
            throw backend.failures.translate(spec.name(), "acquiring", e);
        } catch (InterruptedException e) {
            throw backend.failures.interrupted(spec.name(), "acquiring", e);
        }
        queue = backend.queue(spec.name(), lockPath, children);
        int at = indexOf(queue, node);
        if (at < 0) { // the place was deleted under us (broken while it waited): take a new one at once
            node = null;
            changes.signal();
            return Optional.empty();
        }
        for (ZkNodes.Place h : ZkNodes.holders(queue)) {
            if (h.limit() != spec.limit()) { // a mistake, not a wait: close() gives the place up
                throw backend.failures.failures.limitMismatch(spec.name(), h.limit(), spec.limit());
            }
        }
        List<ZkNodes.Place> blockers = ZkNodes.blockers(queue, at);
        if (blockers.isEmpty()) {
            return grant(s);
        }
        blockedBy = blockers;
        if (!spec.waits()) {
            deleteNow(s, node);
            node = null;
            return Optional.empty();
        }
        watch(s, ZkNodes.watched(queue, at, blockers));
        return Optional.empty();
    }

    private Optional<Grant> grant(ZkSession s) {
        if (backend.keeper.endIfPastLossPoint(s)) { // a grant on it would be lost at birth: try again on a new session
            changes.signal();
            return Optional.empty();
        }
        granted = true;
        blockedBy = List.of();
        return Optional.of(new ZkGrant(backend, s, spec, node, czxid, backend.clock.instant()));
    }

    /**
     * True if the last listing found one place only keeping this one from holding, and its watch
     * has since said that place was deleted: it holds now (new places queue behind it), with no
     * listing. A waiter blocked by several places lists again, as does any other wake-up.
     */
    private boolean onlyBlockerDeleted() {
        List<ZkNodes.Place> b = blockedBy;
        return b.size() == 1 && (lockPath + "/" + b.get(0).node()).equals(deleted) && !session.ended();
    }

    private static int indexOf(List<ZkNodes.Place> queue, String path) {
        if (path == null) {
            return -1;
        }
        String name = path.substring(path.lastIndexOf('/') + 1);
        for (int i = 0; i < queue.size(); i++) {
            if (queue.get(i).node().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /** Creates this attempt's place and lists the queue, in one round trip; makes the parents if missing. */
    private List<String> createAndList(ZkSession s, boolean mayMakeParents)
            throws KeeperException, InterruptedException {
        CompletableFuture<Integer> created = new CompletableFuture<>();
        Stat stat = new Stat();
        s.zk.create(
                lockPath + "/" + ZkNodes.prefix(spec.mode(), spec.limit(), id),
                ZkNodes.data(
                        spec.owner().id(),
                        spec.mode(),
                        spec.limit(),
                        TimeUnit.NANOSECONDS.toMillis(s.deadline.timeoutNanos())),
                backend.acl,
                CreateMode.EPHEMERAL_SEQUENTIAL,
                (rc, path, ctx, name, st) -> {
                    if (rc == KeeperException.Code.OK.intValue()) {
                        node = name;
                        czxid = st.getCzxid();
                    }
                    created.complete(rc);
                },
                null);
        List<String> children = null;
        Exception listing = null;
        try {
            children = s.zk.getChildren(lockPath, false);
        } catch (KeeperException | InterruptedException e) {
            listing = e;
        }
        // Answered before the listing (one session's answers come in order), or failed with the
        // connection: waited for even after an interrupt, so that close() knows the place to delete.
        int rc = created.join();
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.NONODE && mayMakeParents) {
            backend.makeParents(s, spec.name(), lockPath);
            return createAndList(s, false);
        }
        if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.OPERATIONTIMEOUT) {
            maybeCreated = true;
        }
        if (code != KeeperException.Code.OK) {
            throw KeeperException.create(code, lockPath);
        }
        if (listing instanceof InterruptedException) {
            throw (InterruptedException) listing;
        }
        if (listing != null) {
            throw (KeeperException) listing;
        }
        return children;
    }

    /** After a create whose answer was lost: adopts the place it made, if it exists in this session. */
    private boolean findLostCreate(ZkSession s, List<String> children) throws KeeperException, InterruptedException {
        maybeCreated = false;
        for (String c : children) {
            ZkNodes.Place p = ZkNodes.place(c);
            if (p != null && p.attemptId().equals(id)) {
                Stat st = s.zk.exists(lockPath + "/" + c, false);
                if (st != null && st.getEphemeralOwner() == s.id) {
                    node = lockPath + "/" + c;
                    czxid = st.getCzxid();
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Watches the nodes this place waits for (one, or for a permit the N before it); if one is
     * already gone, or cannot be watched, the next try comes at once. Several are watched in one
     * round trip (their answers are not waited for: a node found gone signals the next try).
     */
    private void watch(ZkSession s, List<ZkNodes.Place> waitedFor) {
        if (waitedFor.size() > 1) {
            for (ZkNodes.Place p : waitedFor) {
                s.zk.exists(
                        lockPath + "/" + p.node(),
                        this,
                        (rc, path, ctx, stat) -> {
                            if (stat == null) {
                                changes.signal();
                            }
                        },
                        null);
            }
            return;
        }
        try {
            if (s.zk.exists(lockPath + "/" + waitedFor.get(0).node(), this) == null) {
                changes.signal();
            }
        } catch (KeeperException e) {
            throw backend.failures.translate(spec.name(), "waiting", e);
        } catch (InterruptedException e) {
            throw backend.failures.interrupted(spec.name(), "waiting", e);
        }
    }

    /** The watched node changed or went, or the connection changed: the next try looks again. */
    @Override
    public void process(WatchedEvent event) {
        if (event.getType() == Event.EventType.NodeDeleted) {
            deleted = event.getPath();
        }
        changes.signal();
    }

    @Override
    public void await(long nanos) throws InterruptedException {
        changes.awaitChange(seen, Math.min(nanos, poll.nextNanos()));
    }

    @Override
    public List<HolderInfo> blockers() {
        ZkSession s = session;
        if (s == null || blockedBy.isEmpty() || s.ended()) {
            return List.of();
        }
        try {
            return backend.describe(s, lockPath, queue, blockedBy);
        } catch (RuntimeException e) {
            return List.of(); // for a message only
        }
    }

    /**
     * Gives the place up before returning, so that whoever tries next (in any session) finds it
     * gone; not stopped by an interrupt (the flag is kept). A delete that finds no connection is
     * left to {@link ZkSession#deleteLater}.
     */
    private void deleteNow(ZkSession s, String path) {
        boolean interrupted = Thread.interrupted();
        try {
            s.zk.delete(path, -1);
        } catch (KeeperException.NoNodeException | KeeperException.SessionExpiredException e) {
            // gone already
        } catch (KeeperException e) {
            s.deleteLater(path);
        } catch (InterruptedException e) {
            interrupted = true;
            s.deleteLater(path);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        ZkSession s = session;
        if (granted || s == null || s.ended() && s.owned) {
            return;
        }
        if (node != null) {
            deleteNow(s, node);
            node = null;
        } else if (maybeCreated) {
            boolean interrupted = Thread.interrupted();
            try {
                for (String c : s.zk.getChildren(lockPath, false)) {
                    ZkNodes.Place p = ZkNodes.place(c);
                    if (p != null && p.attemptId().equals(id)) {
                        deleteNow(s, lockPath + "/" + c);
                    }
                }
            } catch (KeeperException e) {
                // no answer: the place, if any, goes with the session
            } catch (InterruptedException e) {
                interrupted = true;
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
