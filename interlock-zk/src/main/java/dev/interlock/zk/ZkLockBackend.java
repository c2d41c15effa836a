package dev.interlock.zk;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.Owner;
import dev.interlock.Ticker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.Log;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The {@code zk:} backend: a lock is a queue of ephemeral sequential nodes under the lock's own
 * container node ({@link ZkNodes}); the first writer, or every reader before the first writer,
 * holds it. Its lease is the ZooKeeper session ({@link SessionKeeper}); its fencing token is the
 * creation zxid of the holder's node, which the ensemble's total order makes strictly increasing
 * across every name, session and leader election (docs/zookeeper.md). The nodes it makes are its
 * ZooKeeper user's alone ({@code CREATOR_ALL_ACL}) when the URI names one, else open to every client.
 */
final class ZkLockBackend implements LockBackend {
    private static final Log log = Log.of(ZkLockBackend.class);
    private static final byte[] MARKER = ZkNodes.MARKER.getBytes(StandardCharsets.UTF_8);

    final ZkLocation loc;
    final SessionKeeper keeper;
    final ZkFailures failures;
    final Clock clock;
    final Ticker ticker;
    /** The ACL of every node this space makes. */
    final List<ACL> acl;
    /** Its nodes are its authenticated identity's alone (a user in the URI, or ZkOptions.CREATOR_ONLY). */
    private final boolean creatorOnly;

    private final String description;
    /** The root's shape was checked and is ours (or absent then: checked again until made). */
    private volatile boolean rootIsOurs;

    ZkLockBackend(
            ZkLocation loc,
            boolean creatorOnly,
            SessionKeeper keeper,
            ZkFailures failures,
            String description,
            Clock clock,
            Ticker ticker) {
        this.loc = loc;
        this.keeper = keeper;
        this.failures = failures;
        this.creatorOnly = creatorOnly;
        this.acl = creatorOnly ? ZooDefs.Ids.CREATOR_ALL_ACL : ZooDefs.Ids.OPEN_ACL_UNSAFE;
        this.description = description;
        this.clock = clock;
        this.ticker = ticker;
    }

    @Override
    public String description() {
        return description;
    }

    /** The ZooKeeper session keeps the locks. */
    @Override
    public LeaseKind leaseKind() {
        return LeaseKind.SESSION;
    }

    @Override
    public Set<Capability> capabilities() {
        return Collections.unmodifiableSet(EnumSet.of(
                Capability.BREAK,
                Capability.STRICT_FENCING,
                Capability.WAITER_COUNT,
                Capability.QUEUE,
                Capability.SEMAPHORE));
    }

    @Override
    public Attempt attempt(AcquireSpec spec) {
        if (spec.permits() != 1) {
            throw new IllegalArgumentException(
                    description + " - taking " + spec.permits() + " permits in one acquisition is not supported yet");
        }
        return new ZkAttempt(this, spec);
    }

    String lockPath(String name) {
        return loc.path + "/" + ZkNodes.encode(name);
    }

    // ------------------------------------------------------------------ the space's shape

    /**
     * Checks that the space's root node, if it exists, is an Interlock space: its data is the
     * marker (or empty, a node made by hand for it) and it is not ephemeral.
     *
     * @return false if it does not exist
     * @throws LockBackendException if it is another application's node
     */
    boolean checkRoot(ZkSession s) {
        if (rootIsOurs) {
            return true;
        }
        Stat st = new Stat();
        byte[] data;
        try {
            data = s.zk.getData(loc.path, false, st);
        } catch (KeeperException.NoNodeException e) {
            refuseInsideAnotherSpace(s);
            return false;
        } catch (KeeperException e) {
            throw failures.translate(null, "reading " + loc.path, e);
        } catch (InterruptedException e) {
            throw failures.interrupted(null, "reading " + loc.path, e);
        }
        boolean empty = data == null || data.length == 0;
        if (st.getEphemeralOwner() != 0
                || !(empty || Arrays.equals(data, MARKER))
                || (empty && st.getNumChildren() > 0)) {
            throw failures.failures.refused(
                    null,
                    "the node " + loc.path + " exists and is not an Interlock lock space (it holds "
                            + (data == null ? 0 : data.length) + " bytes of data and " + st.getNumChildren()
                            + " children"
                            + (st.getEphemeralOwner() != 0 ? ", and is ephemeral or a container" : "")
                            + "): point the URI at a path of its own, e.g. "
                            + loc.path + "/locks",
                    null);
        }
        if (creatorOnly) {
            warnIfOpenToAll(s);
        }
        rootIsOurs = true;
        return true;
    }

    /**
     * An authenticated space whose root another client made open to all (made before the space had
     * a user): the lock nodes made under it before are open too, so another client could delete a
     * holder's place there. Said once per space; the fix is the operator's (docs/zookeeper.md).
     */
    private void warnIfOpenToAll(ZkSession s) {
        try {
            for (ACL a : s.zk.getACL(loc.path, null)) {
                if (a.getId().getScheme().equals("world")
                        && (a.getPerms() & (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE)) != 0) {
                    log.warn(
                            "{} - the space's node {} is open to every ZooKeeper client (it was made without a"
                                    + " user), so locks whose nodes were made before this user came may be deleted"
                                    + " by another client: give it this user's ACL (zkCli: addauth digest {}:PASSWORD, then"
                                    + " setAcl -R {} auth::cdrwa) or use a new path",
                            description,
                            loc.path,
                            loc.user != null ? loc.user : "USER",
                            loc.path);
                    return;
                }
            }
        } catch (KeeperException e) {
            throw failures.translate(null, "reading the ACL of " + loc.path, e);
        } catch (InterruptedException e) {
            throw failures.interrupted(null, "reading the ACL of " + loc.path, e);
        }
    }

    /**
     * A space inside another ({@code /locks/app} when {@code /locks} is one) would be read by the
     * outer one as a lock with foreign nodes: refused before anything is made.
     */
    private void refuseInsideAnotherSpace(ZkSession s) {
        for (int at = loc.path.lastIndexOf('/'); at > 0; at = loc.path.lastIndexOf('/', at - 1)) {
            String ancestor = loc.path.substring(0, at);
            try {
                if (Arrays.equals(s.zk.getData(ancestor, false, null), MARKER)) {
                    throw failures.failures.refused(
                            null,
                            loc.path + " would be inside the lock space " + ancestor
                                    + ", whose locks it would disturb: choose a path outside it",
                            null);
                }
            } catch (KeeperException.NoNodeException e) {
                // no such ancestor: nothing above it either is checked, which costs one read per level
            } catch (KeeperException e) {
                throw failures.translate(null, "reading " + ancestor, e);
            } catch (InterruptedException e) {
                throw failures.interrupted(null, "reading " + ancestor, e);
            }
        }
    }

    /** Makes the root (with its ancestors) and the lock's container node, whichever are missing. */
    void makeParents(ZkSession s, String name, String lockPath) {
        try {
            if (!checkRoot(s)) {
                String[] parts = loc.path.substring(1).split("/");
                StringBuilder at = new StringBuilder();
                for (int i = 0; i < parts.length; i++) {
                    at.append('/').append(parts[i]);
                    createIfAbsent(
                            s, at.toString(), i == parts.length - 1 ? MARKER : new byte[0], CreateMode.PERSISTENT);
                }
                checkRoot(s);
            }
            createIfAbsent(s, lockPath, new byte[0], CreateMode.CONTAINER);
        } catch (KeeperException e) {
            throw failures.translate(name, "making " + lockPath, e);
        } catch (InterruptedException e) {
            throw failures.interrupted(name, "making " + lockPath, e);
        }
    }

    private void createIfAbsent(ZkSession s, String path, byte[] data, CreateMode mode)
            throws KeeperException, InterruptedException {
        try {
            s.zk.create(path, data, acl, mode);
        } catch (KeeperException.NodeExistsException e) {
            // made by another client meanwhile: fine
        }
    }

    /** The queue of {@code children}, or a clear error naming a node that is no Interlock place. */
    List<ZkNodes.Place> queue(String name, String lockPath, List<String> children) {
        try {
            return ZkNodes.queue(children);
        } catch (IllegalStateException e) {
            throw failures.failures.refused(
                    name,
                    "the node " + lockPath + "/" + e.getMessage() + " is not an Interlock lock node, so"
                            + " who holds the lock cannot be told: remove it, or point the URI at a path of its own",
                    null);
        }
    }

    // ------------------------------------------------------------------ status

    /**
     * What each of {@code places} of {@code queue} says: owner, since, token, waiting if it does not
     * hold the lock; and its lease, the session timeout of its holder: a place of a holder that
     * died now would go with its session at most that long from now, which is the "lease until".
     */
    List<HolderInfo> describe(ZkSession s, String lockPath, List<ZkNodes.Place> queue, List<ZkNodes.Place> places) {
        List<HolderInfo> out = new ArrayList<>(places.size());
        Set<ZkNodes.Place> holding = new HashSet<>(ZkNodes.holders(queue));
        Instant now = clock.instant();
        for (ZkNodes.Place p : places) {
            Stat st = new Stat();
            byte[] data;
            try {
                data = s.zk.getData(lockPath + "/" + p.node(), false, st);
            } catch (KeeperException.NoNodeException e) {
                continue; // gone meanwhile
            } catch (KeeperException e) {
                throw failures.translate(null, "reading " + lockPath, e);
            } catch (InterruptedException e) {
                throw failures.interrupted(null, "reading " + lockPath, e);
            }
            HolderInfo.Builder b = HolderInfo.builder(p.mode())
                    .since(Instant.ofEpochMilli(st.getCtime()))
                    .token(st.getCzxid())
                    .waiting(!holding.contains(p));
            long sessionMs = ZkNodes.sessionMs(data);
            if (sessionMs > 0) {
                b.lease(Duration.ofMillis(sessionMs)).validUntil(now.plusMillis(sessionMs));
            }
            String owner = ZkNodes.owner(data);
            if (owner != null) {
                b.ownerId(owner);
                try {
                    Owner o = Owner.parse(owner);
                    b.host(o.host()).pid(o.pid());
                } catch (RuntimeException e) {
                    // an owner id of another form: shown as it is
                }
            }
            out.add(b.build());
        }
        return out;
    }

    @Override
    public LockInfo inspect(String name) {
        ZkSession s = keeper.session();
        if (!checkRoot(s)) {
            return LockInfo.builder(name).waiters(0).build();
        }
        String lockPath = lockPath(name);
        List<String> children;
        try {
            children = s.zk.getChildren(lockPath, false);
        } catch (KeeperException.NoNodeException e) {
            return LockInfo.builder(name).waiters(0).build();
        } catch (KeeperException e) {
            throw failures.translate(name, "reading the lock", e);
        } catch (InterruptedException e) {
            throw failures.interrupted(name, "reading the lock", e);
        }
        List<ZkNodes.Place> queue = queue(name, lockPath, children);
        List<ZkNodes.Place> holding = ZkNodes.holders(queue);
        List<HolderInfo> all = describe(s, lockPath, queue, queue);
        List<HolderInfo> holders = new ArrayList<>();
        List<HolderInfo> waiting = new ArrayList<>();
        for (HolderInfo h : all) {
            (h.waiting() ? waiting : holders).add(h);
        }
        return LockInfo.builder(name)
                .holders(holders)
                .waiters(waiting.size())
                .queued(waiting)
                .limit(holding.isEmpty() ? 0 : holding.get(0).limit())
                .build();
    }

    @Override
    public List<LockInfo> list() {
        ZkSession s = keeper.session();
        if (!checkRoot(s)) {
            return List.of();
        }
        List<String> children;
        try {
            children = s.zk.getChildren(loc.path, false);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (KeeperException e) {
            throw failures.translate(null, "listing " + loc.path, e);
        } catch (InterruptedException e) {
            throw failures.interrupted(null, "listing " + loc.path, e);
        }
        List<String> names = new ArrayList<>();
        for (String c : children) {
            String n = ZkNodes.decode(c);
            if (n != null) {
                names.add(n);
            }
        }
        Collections.sort(names);
        List<LockInfo> out = new ArrayList<>(names.size());
        for (String n : names) {
            out.add(inspect(n));
        }
        return out;
    }

    /**
     * Deletes the holder node of {@code ownerId}: its name is unique (the sequence number is never
     * reused) and the delete names its version, so it can remove nothing but that holder's lock.
     */
    @Override
    public boolean breakLock(String name, String ownerId) {
        ZkSession s = keeper.session();
        if (!checkRoot(s)) {
            return false;
        }
        String lockPath = lockPath(name);
        try {
            List<ZkNodes.Place> queue = queue(name, lockPath, s.zk.getChildren(lockPath, false));
            for (ZkNodes.Place p : ZkNodes.holders(queue)) { // a waiter's place is not broken
                Stat st = new Stat();
                String path = lockPath + "/" + p.node();
                byte[] data;
                try {
                    data = s.zk.getData(path, false, st);
                } catch (KeeperException.NoNodeException e) {
                    continue;
                }
                if (ownerId.equals(ZkNodes.owner(data))) {
                    try {
                        s.zk.delete(path, st.getVersion());
                        return true;
                    } catch (KeeperException.NoNodeException e) {
                        return false;
                    }
                }
            }
            return false;
        } catch (KeeperException.NoNodeException e) {
            return false;
        } catch (KeeperException e) {
            throw failures.translate(name, "breaking the lock", e);
        } catch (InterruptedException e) {
            throw failures.interrupted(name, "breaking the lock", e);
        }
    }

    @Override
    public void close() {
        keeper.close();
    }

    /** The session timeout the servers granted to the live session, for messages and tests; null if none. */
    Duration sessionTimeout() {
        ZkSession s = keeper.currentIfLive();
        return s == null ? null : Duration.ofNanos(s.deadline.timeoutNanos());
    }

    @Override
    public String toString() {
        return description;
    }
}
