package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Semaphores in {@code zk:}'s queue: the permit place's name, who holds in a queue of permits, and
 * which nodes a waiting permit watches so that any release that frees a permit for it wakes it.
 */
class ZkSemaphoreTest {
    private static ZkNodes.Place permit(int limit, long seq) {
        return ZkNodes.place(String.format("s-%d-a%d-%010d", limit, seq, seq));
    }

    @Test
    void aPermitPlace_namesItsLimit_andIllFormedOnesAreNoPlaces() {
        assertThat(ZkNodes.prefix(Mode.EXCLUSIVE, 3, "abc")).isEqualTo("s-3-abc-");
        ZkNodes.Place p = ZkNodes.place("s-3-abc-0000000007");
        assertThat(p).isEqualTo(new ZkNodes.Place("s-3-abc-0000000007", Mode.EXCLUSIVE, "abc", 7, 3));
        assertThat(ZkNodes.place("w-abc-0000000007").limit()).isZero();
        for (String bad : List.of("s-0-abc-0000000007", "s-x-abc-0000000007", "s-3-0000000007", "s--abc-0000000007")) {
            assertThat(ZkNodes.place(bad)).as(bad).isNull();
        }
    }

    @Test
    void theFirstNPermitsHold_andAPermitBehindAnotherKindWaits() {
        List<ZkNodes.Place> permits = List.of(permit(2, 1), permit(2, 2), permit(2, 3));
        assertThat(ZkNodes.holders(permits)).containsExactly(permits.get(0), permits.get(1));
        assertThat(ZkNodes.blockers(permits, 1)).isEmpty();
        assertThat(ZkNodes.blockers(permits, 2)).hasSize(2);

        List<ZkNodes.Place> behindAWriter = List.of(ZkNodes.place("w-b-0000000001"), permit(2, 2));
        assertThat(ZkNodes.holders(behindAWriter)).containsExactly(behindAWriter.get(0));
        assertThat(ZkNodes.blockers(behindAWriter, 1)).containsExactly(behindAWriter.get(0));

        List<ZkNodes.Place> readerBehindPermits = List.of(permit(2, 1), ZkNodes.place("r-b-0000000002"));
        assertThat(ZkNodes.holders(readerBehindPermits)).containsExactly(readerBehindPermits.get(0));
        assertThat(ZkNodes.blockers(readerBehindPermits, 1)).containsExactly(readerBehindPermits.get(0));
    }

    @Test
    void aWaitingPermit_watchesTheNPlacesBeforeIt() {
        List<ZkNodes.Place> q = List.of(permit(2, 1), permit(2, 2), permit(2, 3), permit(2, 4));
        assertThat(ZkNodes.watched(q, 2, ZkNodes.blockers(q, 2))).containsExactly(q.get(0), q.get(1));
        assertThat(ZkNodes.watched(q, 3, ZkNodes.blockers(q, 3))).containsExactly(q.get(1), q.get(2));
        assertThat(ZkNodes.watched(q, 1, ZkNodes.blockers(q, 1))).isEmpty();
    }

    /**
     * Queue [a b c d] of a semaphore of 2: the release of b, not the head, frees a permit for c. A
     * waiter that watched only the place N before it (c: a, d: b) would leave c asleep while d
     * is woken to find itself still third; the safety-net poll is ten minutes here, so only a watch
     * can wake c in time.
     */
    @Test
    void theReleaseOfAnyHolder_wakesTheFirstWaiter_notOnlyTheHeadsRelease() throws Exception {
        String uri = TestZk.uri(TestZk.newPath(), "poll=10m");
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try (LockSpace locks = Interlock.open(uri);
                LockSpace cSpace = Interlock.open(uri);
                LockSpace dSpace = Interlock.open(uri)) {
            Lease a = locks.lock("gpu").limit(2).tryAcquire().orElseThrow();
            Lease b = locks.lock("gpu").limit(2).tryAcquire().orElseThrow();
            Future<Lease> c = pool.submit(() -> cSpace.lock("gpu").limit(2).acquire(Duration.ofMinutes(5)));
            await().atMost(Timing.seconds(10)).until(() -> locks.status("gpu").waiters() == 1);
            Future<Lease> d = pool.submit(() -> dSpace.lock("gpu").limit(2).acquire(Duration.ofMinutes(5)));
            await().atMost(Timing.seconds(10)).until(() -> locks.status("gpu").waiters() == 2);

            b.close();
            Lease cGot = c.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(d.isDone()).as("the later waiter still waits").isFalse();
            a.close();
            Lease dGot = d.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(dGot.token()).isGreaterThan(cGot.token());
            cGot.close();
            dGot.close();
        } finally {
            pool.shutdownNow();
        }
    }
}
