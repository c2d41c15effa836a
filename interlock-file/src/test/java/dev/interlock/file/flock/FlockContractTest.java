package dev.interlock.file.flock;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The shared contract, on {@code flock:}. */
class FlockContractTest extends LockSpaceContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("flock:" + dir);
    }
}
