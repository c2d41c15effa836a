package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.testkit.Timing;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A steady stream of overlapping readers does not starve a writer: it gets in after a bounded number of readers. */
class DirFairnessTest {
    @TempDir
    Path dir;

    @Test
    void writer_isNotStarvedByOverlappingReaders() throws Exception {
        int readers = 4;
        ExecutorService pool = Executors.newFixedThreadPool(readers + 1);
        List<LockSpace> spaces = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong writerArrived = new AtomicLong(Long.MAX_VALUE);
        AtomicLong writerGranted = new AtomicLong(Long.MAX_VALUE);
        List<Long> readerGrants = java.util.Collections.synchronizedList(new ArrayList<>());
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                LockSpace s = Interlock.open("dir:" + dir);
                spaces.add(s);
                fs.add(pool.submit(() -> {
                    while (!stop.get()) {
                        try (Lease l = s.acquire("catalog", Mode.SHARED, Timing.seconds(60))) {
                            readerGrants.add(System.nanoTime());
                            long until = System.nanoTime() + 3_000_000; // hold 3 ms, so that readers overlap
                            while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                            }
                        }
                    }
                    return null;
                }));
            }
            // Wait until the readers are streaming, then let a writer in.
            org.awaitility.Awaitility.await().atMost(Timing.seconds(20)).until(() -> readerGrants.size() >= 50);
            LockSpace ws = Interlock.open("dir:" + dir);
            spaces.add(ws);
            writerArrived.set(System.nanoTime());
            try (Lease w = ws.acquire("catalog", Timing.seconds(20))) {
                writerGranted.set(System.nanoTime());
                assertThat(w.isValid()).isTrue();
            }
            stop.set(true);
            for (Future<?> f : fs) {
                f.get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
            spaces.forEach(LockSpace::close);
        }
        long admittedWhileWriterWaited = readerGrants.stream().filter(t -> t > writerArrived.get() && t < writerGranted.get()).count();
        System.out.println("readers admitted while the writer waited: " + admittedWhileWriterWaited);
        // Readers already inside finish; at most about one more each may slip in while the writer queues.
        assertThat(admittedWhileWriterWaited).as("readers admitted while the writer waited").isLessThanOrEqualTo(2L * readers);
    }
}
