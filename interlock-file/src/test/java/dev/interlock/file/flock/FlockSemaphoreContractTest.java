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

    /**
     * The waiter that holds the gate keeps its place; the others sleep on the gate in flock(2),
     * and a newcomer's try can take the gate between a release and the woken sleeper's run.
     */
    @Override
    protected boolean everyWaiterKeepsItsPlace() {
        return false;
    }
}
