package dev.interlock.shedlock;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShedLock's provider contract on {@code flock:}, whose kernel locks do not expire:
 * {@code lockAtMostFor} does not free a lock this process still holds (see {@link #locksExpire()}).
 */
class FlockShedLockTest extends ShedLockProviderContract {
    @TempDir
    Path dir;

    @Override
    protected String uri() {
        return "flock:" + dir.resolve("locks");
    }

    @Override
    protected boolean locksExpire() {
        return false;
    }
}
