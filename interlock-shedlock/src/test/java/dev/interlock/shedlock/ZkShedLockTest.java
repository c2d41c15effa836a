package dev.interlock.shedlock;

import dev.interlock.testservers.ZkTestServer;

/**
 * ShedLock's provider contract on {@code zk:}, a ZooKeeper server started by the test, each test
 * under its own path. A {@code zk:} lock is kept by its holder's session, not by a lease:
 * {@code lockAtMostFor} does not free a lock this process still holds (see {@link #locksExpire()}),
 * as on {@code flock:}; {@code lockAtLeastFor} is kept by this process's timer, on fake time. The
 * session is long enough that the fake clock's jumps (minutes in one test) never look like a
 * process paused past its session's loss point.
 */
class ZkShedLockTest extends ShedLockProviderContract {
    private final String uri = ZkTestServer.newUri(ZkTestServer.LONG_SESSION);

    @Override
    protected String uri() {
        return uri;
    }

    @Override
    protected boolean locksExpire() {
        return false;
    }
}
