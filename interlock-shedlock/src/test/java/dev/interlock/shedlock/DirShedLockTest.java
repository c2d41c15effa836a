package dev.interlock.shedlock;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShedLock's provider contract on {@code dir:}. Others judge a {@code dir:} holder by the lease it
 * wrote at acquisition, so a lock unlocked before its {@code lockAtLeastFor} is reclaimed by an
 * observer one lease after it first sees the last renewal, not exactly at the hold-at-least time.
 */
class DirShedLockTest extends ShedLockProviderContract {
    @TempDir
    Path dir;

    @Override
    protected String uri() {
        return "dir:" + dir.resolve("locks");
    }

    @Override
    protected void assertFreedAfter(Duration wait, String name) {
        timer.advance(wait);
        assertHeld(name); // node B sees the holder's last name...
        timer.advance(d().plusMillis(1)); // ...and waits one lease from there
        assertFree(name);
    }
}
