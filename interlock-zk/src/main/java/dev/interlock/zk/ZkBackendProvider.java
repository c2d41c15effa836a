package dev.interlock.zk;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import dev.interlock.spi.support.BackendFailures;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.zookeeper.ZooKeeper;

/**
 * Provides {@code zk://} lock spaces; see {@link ZkLocation} for the URI and docs/zookeeper.md for
 * the rest. Opening connects (a session is opened and checked, and the space's node, if it exists,
 * must be an Interlock space), so an unreachable ensemble or a wrong path is a
 * {@link dev.interlock.LockBackendException} at once, not at the first lock.
 */
public final class ZkBackendProvider implements LockBackendProvider {
    /** For {@link java.util.ServiceLoader}. */
    public ZkBackendProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("zk");
    }

    @Override
    public String description() {
        return "nodes in a ZooKeeper ensemble, held by the client's session, with fencing tokens: " + ZkLocation.FORM;
    }

    @Override
    public LockBackend open(BackendConfig config) {
        ZkLocation loc = ZkLocation.parse(config.location(), System::getenv);
        ZooKeeper given = config.option(ZkOptions.CLIENT).orElse(null);
        String description = loc.description();
        if (given != null && loc.user != null) {
            throw new IllegalArgumentException(description + " - with a ZooKeeper client given, the URI takes no"
                    + " user or password: authenticate the client itself (addAuthInfo), before it is given");
        }
        boolean creatorOnly = config.option(ZkOptions.CREATOR_ONLY).orElse(false);
        if (creatorOnly && given == null) {
            throw new IllegalArgumentException(description + " - ZkOptions.CREATOR_ONLY is for a client given with"
                    + " ZkOptions.CLIENT: without one, give the user in the URI (zk://USER:PASSWORD@HOST/PATH),"
                    + " whose nodes are its own");
        }
        BackendFailures failures = new BackendFailures(description);
        ZkFailures zkFailures = new ZkFailures(failures, description, loc.user);
        SessionKeeper keeper =
                new SessionKeeper(loc, given, config.ticker(), zkFailures, threads(config.threadFactory()));
        try {
            ZkLockBackend backend = new ZkLockBackend(
                    loc,
                    loc.user != null || creatorOnly,
                    keeper,
                    zkFailures,
                    description,
                    config.clock(),
                    config.ticker());
            backend.checkRoot(keeper.session());
            return backend;
        } catch (RuntimeException e) {
            keeper.close();
            throw e;
        }
    }

    private static ThreadFactory threads(ThreadFactory given) {
        if (given != null) {
            return given;
        }
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "interlock-zk-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
