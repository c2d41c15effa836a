package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import dev.interlock.testkit.Timing;
import org.junit.jupiter.api.Test;

/**
 * A lock broken by another process is told to its holder by ZooKeeper itself, not by the core's
 * periodic check: here the core's timers are on a manual scheduler that never runs, so only the
 * backend can tell. The break comes before the session keeper's first look at the new grant,
 * when the grant's node is already gone and no watch can be set on it.
 */
class ZkBreakNoticeTest {
    @Test
    void aBreakBeforeTheKeepersFirstLook_isToldByTheBackend() {
        String uri = TestZk.uri(TestZk.newPath(), "");
        FakeTicker ticker = new FakeTicker();
        ManualScheduler never = new ManualScheduler(ticker);
        try (LockSpace holder = Interlock.builder(uri)
                        .ticker(ticker)
                        .scheduler(never)
                        .executor(never)
                        .open();
                LockSpace other = Interlock.open(uri)) {
            Lease lease = holder.tryAcquire("job").orElseThrow();
            assertThat(other.breakLock("job", lease.owner().id())).isTrue();
            await().atMost(Timing.seconds(30)).until(() -> !lease.isValid());
            lease.close();
        }
    }
}
