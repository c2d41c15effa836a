package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Keeping /proc/locks cheap to read while a short command starts. */
class ProcLocksFileTest {
    @Test
    void keepWarm_stopsOnceSomebodyElseHasRead() throws Exception {
        int before = ProcLocksFile.warmReads();
        int reads = ProcLocksFile.reads();
        CompletableFuture<Integer> warm =
                CompletableFuture.supplyAsync(() -> ProcLocksFile.keepWarm(reads, TimeUnit.MINUTES.toNanos(1)));
        long limit = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ProcLocksFile.warmReads() == before && System.nanoTime() - limit < 0) {
            Thread.onSpinWait();
        }
        assertThat(ProcLocksFile.warmReads()).as("keepWarm read /proc/locks").isGreaterThan(before);
        ProcLocksFile.read();
        // One minute if it did not notice; it checks after each read, every few milliseconds.
        assertThat(warm.get(30, TimeUnit.SECONDS)).isPositive();
    }

    @Test
    void keepWarm_endsAtItsTimeLimit_whenNobodyReads() {
        assertThat(ProcLocksFile.keepWarm(ProcLocksFile.reads(), 0)).isZero();
    }

    @Test
    void keepWarm_startedAfterTheCommandsRead_stopsAtOnce() {
        int before = ProcLocksFile.reads();
        ProcLocksFile.read(); // the command was quicker than the thread that keeps it warm
        assertThat(ProcLocksFile.keepWarm(before, TimeUnit.MINUTES.toNanos(1))).isZero();
    }
}
