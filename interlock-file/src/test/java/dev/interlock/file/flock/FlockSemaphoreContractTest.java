package dev.interlock.file.flock;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The semaphore contract on {@code flock:}: kernel locks have no lease, so the lease cases are skipped. */
class FlockSemaphoreContractTest extends SemaphoreContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("flock:" + dir);
    }
}
