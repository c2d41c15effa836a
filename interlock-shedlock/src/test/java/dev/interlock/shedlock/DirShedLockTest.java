package dev.interlock.shedlock;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** ShedLock's provider contract on {@code dir:}. */
class DirShedLockTest extends ShedLockProviderContract {
    @TempDir
    Path dir;

    @Override
    protected String uri() {
        return "dir:" + dir.resolve("locks");
    }
}
