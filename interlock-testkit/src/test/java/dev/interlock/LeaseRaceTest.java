package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.mem.MemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease state machine (HELD, then exactly one of CLOSED or LOST) under races: in every round,
 * threads released together by a barrier close the lease, renew it, push a loss through the
 * backend's loss channel and take the lock away under a renewal, in every order the scheduler
 * picks, while another reads {@code isValid()}. After each round the invariants must hold:
 * the lease ended exactly once, listeners ran at most once (exactly once if it was lost), the
 * backend saw exactly one release, no call failed with anything but the documented exceptions,
 * and the name is free again.
 */
class LeaseRaceTest {
    static final int ROUNDS = 1500;
    final String ns = UUID.randomUUID().toString();
    LockSpace locks;
    MemoryBackend backend;
    ExecutorService pool;

    @BeforeEach
    void open() {
        // Listeners and the release after a loss run on a direct executor, so each round is complete when its threads
        // are.
        locks = Interlock.builder("mem:" + ns)
                .executor(Runnable::run)
                .defaultLease(Duration.ofMinutes(5))
                .open();
        backend = MemoryBackend.of(ns).orElseThrow();
        pool = Executors.newFixedThreadPool(5);
    }

    @AfterEach
    void close() {
        pool.shutdownNow();
        locks.close();
        MemoryBackend.forget(ns);
    }

    @Test
    void closeRenewPushedLossAndTakeAway_race_andTheLeaseEndsExactlyOnce() throws Exception {
        List<String> broken = new ArrayList<>();
        for (int round = 0; round < ROUNDS && broken.size() < 5; round++) {
            Lease l = locks.tryAcquire("race").orElseThrow();
            AtomicInteger told = new AtomicInteger();
            l.onLost(e -> told.incrementAndGet());
            int releasesBefore = backend.calls().releases();
            CyclicBarrier go = new CyclicBarrier(5);
            List<Future<String>> fs = new ArrayList<>();
            fs.add(pool.submit(() -> {
                go.await();
                l.close();
                return "closed";
            }));
            fs.add(pool.submit(() -> {
                go.await();
                try {
                    l.renew();
                    return "renewed";
                } catch (LockLostException e) {
                    return "lost";
                } catch (IllegalStateException e) {
                    return "already closed";
                }
            }));
            fs.add(pool.submit(() -> {
                go.await();
                return backend.reportLoss("race", l.owner().id(), "pushed") ? "pushed" : "nothing to push";
            }));
            fs.add(pool.submit(() -> {
                go.await();
                return backend.takeAway("race", l.owner().id()) ? "taken" : "nothing to take";
            }));
            fs.add(pool.submit(() -> {
                go.await();
                boolean seen = false;
                for (int i = 0; i < 100; i++) {
                    seen |= !l.isValid();
                }
                return seen ? "saw invalid" : "saw valid";
            }));
            List<String> outcomes = new ArrayList<>();
            for (Future<String> f : fs) {
                try {
                    outcomes.add(f.get(10, TimeUnit.SECONDS));
                } catch (java.util.concurrent.ExecutionException e) {
                    Throwable c = e.getCause();
                    if (!(c instanceof LockBackendException)) {
                        broken.add("round " + round + ": unexpected " + c);
                    }
                }
            }
            l.close(); // whatever happened, a second close is a no-op
            int releases = backend.calls().releases() - releasesBefore;
            boolean lost = told.get() > 0;
            if (told.get() > 1) {
                broken.add("round " + round + ": listener told " + told.get() + " times " + outcomes);
            }
            if (outcomes.contains("lost") && !lost) {
                broken.add("round " + round + ": renew() threw lost but no listener was told " + outcomes);
            }
            if (releases != 1) {
                broken.add("round " + round + ": " + releases + " releases " + outcomes);
            }
            if (l.isValid()) {
                broken.add("round " + round + ": still valid after close " + outcomes);
            }
            if (!locks.status("race").isFree()) {
                broken.add("round " + round + ": the name stayed held " + outcomes);
                backend.takeAway("race", l.owner().id());
            }
        }
        assertThat(broken).isEmpty();
    }
}
