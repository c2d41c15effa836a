package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Capability;
import dev.interlock.Lease;
import dev.interlock.LimitMismatchException;
import dev.interlock.LockInfo;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The counting-semaphore behaviour every backend with {@link Capability#SEMAPHORE} shares
 * ({@code LockRequest.limit(n)}, docs/semaphores.md). A backend's test extends this as it extends
 * {@link LockSpaceContract}: {@link #openSpace()} opens independent spaces on one namespace.
 */
public abstract class SemaphoreContract {
    /** Opens a new lock space on this test's namespace (the same namespace for every call in one test). */
    protected abstract LockSpace openSpace();

    /**
     * Two spaces on a fresh namespace whose backend measures leases on {@code ticker} (the first
     * runs its timers on {@code timer}), or empty if the backend keeps time of its own (a server's
     * TTL): the lease-expiry case then runs on a short fixed lease in real time instead.
     */
    protected Optional<List<LockSpace>> openOnFakeTime(FakeTicker ticker, ManualScheduler timer) {
        return Optional.empty();
    }

    protected LockSpace locks;
    private final List<LockSpace> extra = new CopyOnWriteArrayList<>();
    private ExecutorService pool;

    @BeforeEach
    void openLocks() {
        locks = openSpace();
        assumeTrue(locks.capabilities().contains(Capability.SEMAPHORE), "this backend has no semaphores");
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "semaphore-worker");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void closeLocks() {
        if (pool != null) {
            pool.shutdownNow();
        }
        for (LockSpace s : extra) {
            s.close();
        }
        locks.close();
    }

    /** A second, independent space on the same namespace (as another process would open). */
    protected LockSpace other() {
        LockSpace s = openSpace();
        extra.add(s);
        return s;
    }

    private static Optional<Lease> tryPermit(LockSpace s, String name, int limit) {
        return s.lock(name).limit(limit).tryAcquire();
    }

    /**
     * Waits until the backend counts {@code n} waiters on {@code name}; skips the test on a backend
     * that cannot count them (there is no way to know a waiter has queued without sleeping).
     */
    private void awaitWaiters(String name, int n) {
        assumeTrue(locks.capabilities().contains(Capability.WAITER_COUNT), "this backend does not count its waiters");
        await().atMost(Timing.seconds(10)).until(() -> locks.status(name).waiters() >= n);
    }

    @Test
    void atMostN_holders_theNextIsRefused_andGetsAPermitOnRelease() throws Exception {
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(tryPermit(i % 2 == 0 ? locks : other(), "imports", 3)
                    .orElseThrow(() -> new AssertionError("a permit was free")));
        }
        assertThat(tryPermit(other(), "imports", 3))
                .as("the fourth of a semaphore of 3")
                .isEmpty();
        assertThatThrownBy(() -> other().lock("imports").limit(3).acquire(Duration.ofMillis(200)))
                .isInstanceOf(LockTimeoutException.class)
                .hasMessageContaining("'imports' (a permit of 3) not acquired after");
        LockSpace waiterSpace = other();
        Future<Lease> waiter =
                pool.submit(() -> waiterSpace.lock("imports").limit(3).acquire(Timing.seconds(60)));
        awaitWaiters("imports", 1);
        assertThat(waiter.isDone()).isFalse();
        held.get(1).close();
        Lease got = waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(got.isValid()).isTrue();
        assertThat(locks.status("imports").holders()).hasSize(3);
        got.close();
        held.get(0).close();
        held.get(2).close();
        assertThat(locks.status("imports").isFree()).isTrue();
    }

    @Test
    void everyPermit_hasItsOwnLease_owner_andAStrictlyGreaterToken() {
        long last = 0;
        List<Lease> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Lease l = tryPermit(i % 2 == 0 ? locks : other(), "fenced", 3).orElseThrow();
            assertThat(l.token()).as("grant %d", i).isGreaterThan(last);
            last = l.token();
            held.add(l);
        }
        assertThat(held).extracting(l -> l.owner().id()).doesNotHaveDuplicates();
        held.get(0).close();
        assertThat(held.get(1).isValid())
                .as("one permit's release leaves the others held")
                .isTrue();
        held.get(1).renew();
        Lease next = tryPermit(other(), "fenced", 3).orElseThrow();
        assertThat(next.token()).isGreaterThan(last);
        next.close();
        held.get(1).close();
        held.get(2).close();
        try (Lease plain = locks.tryAcquire("fenced").orElseThrow()) {
            assertThat(plain.token())
                    .as("one token sequence per name, locks and semaphores alike")
                    .isGreaterThan(next.token());
        }
    }

    @Test
    void waiters_areServedInArrivalOrder_andNoNewcomerOvertakesThem() throws Exception {
        Lease a = tryPermit(locks, "fifo", 2).orElseThrow();
        Lease b = tryPermit(other(), "fifo", 2).orElseThrow();
        LockSpace firstSpace = other();
        Future<Lease> first = pool.submit(() -> firstSpace.lock("fifo").limit(2).acquire(Timing.seconds(60)));
        awaitWaiters("fifo", 1);
        LockSpace secondSpace = other();
        Future<Lease> second =
                pool.submit(() -> secondSpace.lock("fifo").limit(2).acquire(Timing.seconds(60)));
        awaitWaiters("fifo", 2);
        LockSpace newcomer = other();
        a.close();
        // The freed permit is the first waiter's: a newcomer that tries at once (sooner than a
        // woken waiter can) must not take it, nor may the later waiter.
        assertNoNewcomerGetsIn(newcomer, "fifo", 2, first);
        Lease gotFirst = first.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(second.isDone()).as("the later waiter still waits").isFalse();
        b.close();
        assertNoNewcomerGetsIn(newcomer, "fifo", 2, second);
        Lease gotSecond = second.get();
        assertThat(gotSecond.token()).isGreaterThan(gotFirst.token());
        gotFirst.close();
        gotSecond.close();
    }

    /**
     * The last permit back while someone waits: the name is as free as it ever is (no holder at
     * all), and still the waiter's, not a newcomer's.
     */
    @Test
    void aWaiter_keepsItsTurn_whenEveryPermitIsBack() throws Exception {
        Lease only = tryPermit(locks, "all-back", 1).orElseThrow();
        LockSpace waiterSpace = other();
        Future<Lease> waiter =
                pool.submit(() -> waiterSpace.lock("all-back").limit(1).acquire(Timing.seconds(60)));
        awaitWaiters("all-back", 1);
        LockSpace newcomer = other();
        only.close();
        assertNoNewcomerGetsIn(newcomer, "all-back", 1, waiter);
        Lease got = waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(got.token()).isGreaterThan(only.token());
        got.close();
        Lease again = tryPermit(newcomer, "all-back", 1).orElseThrow();
        assertThat(again.token()).as("a permit after the waiter's").isGreaterThan(got.token());
        again.close();
    }

    /** Tries for a permit from {@code newcomer} until {@code waiter} has it: every try must fail. */
    private static void assertNoNewcomerGetsIn(LockSpace newcomer, String name, int limit, Future<Lease> waiter) {
        long deadline = System.nanoTime() + Timing.seconds(10).toNanos();
        do {
            Optional<Lease> n = newcomer.lock(name).limit(limit).tryAcquire();
            n.ifPresent(Lease::close);
            assertThat(n).as("a newcomer overtook a waiter").isEmpty();
        } while (!waiter.isDone() && System.nanoTime() < deadline);
    }

    @Test
    void threads_neverMoreThanNInTheSection_andEveryoneGetsTurns() throws Exception {
        int limit = 3;
        int threads = 8;
        int rounds = 30;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            LockSpace s = t % 2 == 0 ? locks : other();
            fs.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (Lease l = s.lock("section").limit(limit).acquire(Timing.seconds(60))) {
                        int now = inside.incrementAndGet();
                        most.accumulateAndGet(now, Math::max);
                        Thread.yield();
                        inside.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(most.get()).isBetween(1, limit);
    }

    @Test
    void aPermitWhoseLeaseRunsOut_isFreedForOthers() {
        Lease l = locks.lock("expiring")
                .limit(1)
                .lease(Duration.ofMillis(50))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        try {
            assumeTrue(!l.validUntil().equals(Instant.MAX), "locks of this backend do not expire");
            LockSpace o = other();
            await().atMost(Timing.seconds(10)).until(() -> {
                Optional<Lease> next = tryPermit(o, "expiring", 1);
                next.ifPresent(Lease::close);
                return next.isPresent();
            });
            assertThat(l.isValid()).isFalse();
        } finally {
            l.close();
        }
    }

    @Test
    void aPermitWhoseLeaseRunsOut_onFakeTime_isFreedAfterItsLease_notBefore() {
        FakeTicker ticker = new FakeTicker();
        ManualScheduler timer = new ManualScheduler(ticker);
        Optional<List<LockSpace>> spaces = openOnFakeTime(ticker, timer);
        assumeTrue(spaces.isPresent(), "this backend keeps time of its own");
        LockSpace holder = spaces.get().get(0);
        LockSpace others = spaces.get().get(1);
        try {
            Lease dying = holder.lock("gpu")
                    .limit(2)
                    .lease(Duration.ofSeconds(10))
                    .fixedLease()
                    .tryAcquire()
                    .orElseThrow();
            Lease living = holder.lock("gpu")
                    .limit(2)
                    .lease(Duration.ofSeconds(10))
                    .tryAcquire()
                    .orElseThrow();
            timer.advance(Duration.ofSeconds(9));
            assertThat(tryPermit(others, "gpu", 2)).as("both leases still run").isEmpty();
            timer.advance(Duration.ofSeconds(2));
            assertThat(dying.isValid()).isFalse();
            assertThat(living.isValid()).as("renewed in the background").isTrue();
            Lease freed = tryPermit(others, "gpu", 2)
                    .orElseThrow(() -> new AssertionError("the expired permit was not freed"));
            assertThat(tryPermit(others, "gpu", 2))
                    .as("only the expired permit came back")
                    .isEmpty();
            assertThat(freed.token()).isGreaterThan(living.token());
            freed.close();
            living.close();
            dying.close();
        } finally {
            holder.close();
            others.close();
        }
    }

    @Test
    void aLimitThatDisagreesWithTheHolders_isAClearError_andGrantsNothing() throws Exception {
        try (Lease held = tryPermit(locks, "backups", 2).orElseThrow()) {
            assertThatThrownBy(() -> tryPermit(other(), "backups", 3))
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("'backups'")
                    .hasMessageContaining("semaphore of 2")
                    .hasMessageContaining("semaphore of 3")
                    .hasMessageNotContaining("Exception");
            long start = System.nanoTime();
            assertThatThrownBy(() -> other().lock("backups").limit(3).acquire(Timing.seconds(60)))
                    .as("a mistake, not a wait")
                    .isInstanceOf(LimitMismatchException.class)
                    .satisfies(e -> assertThat(((LimitMismatchException) e).limitInForce())
                            .isEqualTo(2));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Timing.seconds(30));
            assertThat(locks.status("backups").holders()).hasSize(1);
        }
        // A new limit takes effect once no holder remains.
        try (Lease three = tryPermit(other(), "backups", 3).orElseThrow()) {
            assertThat(locks.status("backups").limit()).isEqualTo(3);
        }
    }

    @Test
    void aSemaphoreNameUsedAsALock_andALockNameUsedAsASemaphore_areClearErrors() {
        try (Lease permit = tryPermit(locks, "mixed", 2).orElseThrow()) {
            assertThatThrownBy(() -> other().tryAcquire("mixed"))
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("semaphore of 2")
                    .hasMessageContaining("plain lock");
            assertThat(locks.status("mixed").holders()).hasSize(1);
        }
        try (Lease lock = locks.tryAcquire("mixed").orElseThrow()) {
            assertThatThrownBy(() -> tryPermit(other(), "mixed", 2))
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("held as a plain lock");
            assertThat(locks.status("mixed").holders())
                    .singleElement()
                    .satisfies(
                            h -> assertThat(h.ownerId()).contains(lock.owner().id()));
        }
    }

    @Test
    void badLimits_areClearErrors() {
        for (int bad : new int[] {0, -1, Integer.MIN_VALUE, LockRequest.MAX_LIMIT + 1, Integer.MAX_VALUE}) {
            assertThatThrownBy(() -> locks.lock("bad").limit(bad))
                    .as("limit %d", bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("from 1 to " + LockRequest.MAX_LIMIT)
                    .hasMessageContaining("was " + bad);
        }
        assertThatThrownBy(() -> locks.lock("bad").limit(2).shared().tryAcquire())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot be shared");
        assertThat(locks.status("bad").isFree()).isTrue();
        tryPermit(locks, "bad", LockRequest.MAX_LIMIT).orElseThrow().close();
    }

    @Test
    void status_showsTheLimit_andEveryHolderWithOwnerSinceLeaseAndToken() {
        Lease a = tryPermit(locks, "shown", 4).orElseThrow();
        Lease b = tryPermit(other(), "shown", 4).orElseThrow();
        try {
            LockInfo info = other().status("shown");
            assertThat(info.limit()).isEqualTo(4);
            assertThat(info.holders())
                    .extracting(h -> h.ownerId().orElseThrow())
                    .containsExactlyInAnyOrder(a.owner().id(), b.owner().id());
            assertThat(info.holders())
                    .extracting(h -> h.token().orElseThrow())
                    .containsExactlyInAnyOrder(a.token(), b.token());
            assertThat(info.holders()).allSatisfy(h -> {
                assertThat(h.since()).isPresent();
                assertThat(h.validUntil().orElseThrow()).isAfter(Instant.now().minusSeconds(1));
            });
            assertThat(other().list())
                    .filteredOn(i -> i.name().equals("shown"))
                    .singleElement()
                    .satisfies(i -> assertThat(i.limit()).isEqualTo(4));
        } finally {
            a.close();
            b.close();
        }
        assertThat(locks.status("shown").limit()).as("free: no limit in force").isZero();
    }

    @Test
    void waitingForAPermit_interrupted_throwsAndHoldsNothing() throws Exception {
        try (Lease held = tryPermit(other(), "intr", 1).orElseThrow()) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    locks.lock("intr").limit(1).acquire(Timing.seconds(60)).close();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            awaitWaiters("intr", 1);
            t.interrupt();
            t.join(Timing.seconds(10).toMillis());
            assertThat(t.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
            assertThat(locks.status("intr").holders()).hasSize(1);
        }
        tryPermit(other(), "intr", 1).orElseThrow().close();
    }
}
