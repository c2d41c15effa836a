package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A thread whose interrupt is set (a cancelled task, an executor shutting down) still takes a
 * free lock with a single try, as {@code Lock.tryLock()} does, and still releases what it holds in
 * its {@code finally}; it keeps its interrupt. The ZooKeeper client's blocking calls refuse at once
 * on an interrupted thread, so without care both would fail and a release would leave the lock held.
 */
class ZkInterruptedThreadTest {
    @Test
    void aSingleTry_andAClose_onAnInterruptedThread_work_andKeepTheInterrupt() {
        try (LockSpace locks = Interlock.open(TestZk.uri(TestZk.newPath(), ""))) {
            boolean[] kept = new boolean[2];
            Optional<Lease> lease;
            try {
                Thread.currentThread().interrupt();
                lease = locks.tryAcquire("job");
                kept[0] = Thread.currentThread().isInterrupted();
                lease.ifPresent(Lease::close);
                kept[1] = Thread.currentThread().isInterrupted();
            } finally {
                Thread.interrupted();
            }
            assertThat(lease)
                    .as("a free lock, tried once by an interrupted thread")
                    .isPresent();
            assertThat(kept).as("the interrupt after tryAcquire(), close()").containsOnly(true);
            assertThat(locks.status("job").isFree())
                    .as("released by the interrupted thread")
                    .isTrue();
        }
    }
}
