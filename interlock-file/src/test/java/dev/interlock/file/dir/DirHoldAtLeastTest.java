package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A lock closed before its hold-at-least time, whose process then exits (its space closes): the
 * last renewal wrote the remaining time into the entry's name as its lease, so another process
 * that watches it reclaims it then, not a whole lease later. Readers carry it in their heartbeat.
 * Both spaces run on one injected ticker; the second plays another process.
 */
class DirHoldAtLeastTest {
    @TempDir
    Path dir;

    final FakeTicker ticker = new FakeTicker();
    final ManualScheduler timer = new ManualScheduler(ticker);
    LockSpace holder;
    LockSpace other;

    private LockSpace open() {
        return Interlock.builder("dir:" + dir)
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .defaultLease(Duration.ofMinutes(10))
                .open();
    }

    @AfterEach
    void close() {
        holder.close();
        other.close();
    }

    private void closedEarly_thenExit_isReclaimedAtTheHoldTime(Mode mode) throws Exception {
        holder = open();
        other = open();
        Lease l = holder.lock("job")
                .mode(mode)
                .fixedLease()
                .holdAtLeast(Duration.ofSeconds(30))
                .acquire();
        timer.advance(Duration.ofSeconds(10));
        l.close(); // kept 20 s more
        holder.close(); // the process exits: nothing of it will release the lock
        assertThat(other.tryAcquire("job"))
                .as("kept for its hold-at-least time")
                .isEmpty();
        timer.advance(Duration.ofSeconds(19));
        assertThat(other.tryAcquire("job")).as("19 s after: still kept").isEmpty();
        timer.advance(Duration.ofSeconds(1).plusMillis(1));
        assertThat(other.tryAcquire("job"))
                .as("20 s after it was seen: reclaimed, not 10 min later")
                .isPresent()
                .get()
                .satisfies(Lease::close);
    }

    @Test
    void writer_closedEarly_thenItsProcessExits_isReclaimedAtTheHoldTime() throws Exception {
        closedEarly_thenExit_isReclaimedAtTheHoldTime(Mode.EXCLUSIVE);
    }

    @Test
    void reader_closedEarly_thenItsProcessExits_isReclaimedAtTheHoldTime() throws Exception {
        closedEarly_thenExit_isReclaimedAtTheHoldTime(Mode.SHARED);
    }
}
