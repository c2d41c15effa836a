package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.FakeClock;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code status} names the queued waiters, in the order they will be served, with their short queue lease. */
class DirQueuedStatusTest {
    @TempDir
    Path dir;

    @Test
    void status_listsQueuedWaitersInOrder() throws Exception {
        FakeClock wall = FakeClock.at(DirQueueLeaseTest.LONG_AGO);
        try (LockSpace locks = Interlock.builder("dir:" + dir)
                .clock(wall)
                .defaultLease(Duration.ofHours(1))
                .open()) {
            Lease held = locks.tryAcquire("job").orElseThrow();
            Owner first = Owner.newAcquisition();
            Owner second = Owner.newAcquisition();
            try (Attempt a = queue(locks, first, Mode.SHARED, Duration.ofHours(1))) {
                wall.advance(Duration.ofSeconds(1));
                try (Attempt b = queue(locks, second, Mode.EXCLUSIVE, Duration.ofSeconds(2))) {
                    LockInfo info = locks.status("job");
                    assertThat(info.holders())
                            .singleElement()
                            .satisfies(h -> assertThat(h.waiting()).isFalse());
                    assertThat(info.waiters()).isEqualTo(2);
                    assertThat(info.queued())
                            .extracting(h -> h.ownerId().orElseThrow())
                            .containsExactly(first.id(), second.id());
                    assertThat(info.queued())
                            .allSatisfy(h -> assertThat(h.waiting()).isTrue());
                    assertThat(info.queued())
                            .extracting(h -> h.lease().orElseThrow())
                            .as("min(lease, 5s)")
                            .containsExactly(Duration.ofSeconds(5), Duration.ofSeconds(2));
                    assertThat(info.queued().get(0).describe())
                            .isEqualTo("SH by " + first.id() + " (pid "
                                    + ProcessHandle.current().pid() + ") waiting since " + DirQueueLeaseTest.LONG_AGO);
                }
            }
            held.close();
            assertThat(locks.status("job").queued()).isEmpty();
        }
    }

    private static Attempt queue(LockSpace locks, Owner owner, Mode mode, Duration lease) throws InterruptedException {
        Attempt a = Spaces.backend(locks).attempt(new AcquireSpec("job", mode, owner, lease));
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0);
        return a;
    }
}
