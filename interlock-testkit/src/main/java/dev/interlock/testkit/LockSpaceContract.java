package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Capability;
import dev.interlock.Interlock;
import dev.interlock.InvalidLockNameException;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every backend shares. A backend's test extends this and says how to open a lock
 * space on a fresh namespace; {@link #openSpace()} may be called several times per test to get
 * independent spaces on the same namespace (as two processes would).
 */
public abstract class LockSpaceContract {
    /** Opens a new lock space on this test's namespace (the same namespace for every call in one test). */
    protected abstract LockSpace openSpace();

    protected LockSpace locks;
    /** Thread-safe: a test may open a space on a worker thread while the test thread opens another. */
    private final List<LockSpace> extra = new CopyOnWriteArrayList<>();

    private ExecutorService pool;

    @BeforeEach
    void openLocks() {
        locks = openSpace();
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "contract-worker");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void closeLocks() {
        pool.shutdownNow();
        for (LockSpace s : extra) {
            s.close();
        }
        locks.close();
    }

    /**
     * The URI of this test's namespace, for the tests that open spaces with a fake ticker and a
     * manual scheduler (lease loss without waiting for real time); null skips them.
     */
    protected String uri() {
        return null;
    }

    /** What this test can do to its backend (see {@link BackendHooks}); the default can do nothing. */
    protected BackendHooks hooks() {
        return BackendHooks.NONE;
    }

    /**
     * Takes the lease's lock away: the backend's hook, else a break by owner from another space
     * where the backend can break locks. False if neither works.
     */
    private boolean takeAway(Lease l) {
        if (hooks().takeAway(l)) {
            return true;
        }
        if (locks.capabilities().contains(Capability.BREAK)) {
            return other().breakLock(l.name(), l.owner().id());
        }
        return false;
    }

    /**
     * A space on this test's namespace on {@code ticker}, whose time passes only when {@code timer}
     * advances it (the timer also runs the space's backend calls); skips the test without {@link #uri()}.
     */
    private LockSpace openOnFakeTime(FakeTicker ticker, ManualScheduler timer) {
        assumeTrue(uri() != null, "this test needs uri() to open a space on fake time");
        return Interlock.builder(uri())
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .open();
    }

    /** A second, independent space on the same namespace. */
    protected LockSpace other() {
        LockSpace s = openSpace();
        extra.add(s);
        return s;
    }

    @Test
    void tryAcquire_free_returnsLeaseWithFacts() {
        Instant before = Instant.now().minusSeconds(1);
        Lease lease = locks.tryAcquire("job").orElseThrow();
        try {
            assertThat(lease.name()).isEqualTo("job");
            assertThat(lease.mode()).isEqualTo(Mode.EXCLUSIVE);
            assertThat(lease.owner().pid()).isEqualTo(ProcessHandle.current().pid());
            assertThat(lease.owner().id())
                    .contains(":" + ProcessHandle.current().pid() + ":");
            assertThat(lease.token()).isPositive();
            assertThat(lease.acquiredAt())
                    .isAfter(before)
                    .isBefore(Instant.now().plusSeconds(1));
            assertThat(lease.validUntil()).isAfter(Instant.now());
            assertThat(lease.isValid()).isTrue();
        } finally {
            lease.close();
        }
        assertThat(lease.isValid()).isFalse();
    }

    @Test
    void tryAcquire_heldExclusively_returnsEmpty() {
        try (Lease held = locks.tryAcquire("job").orElseThrow()) {
            assertThat(other().tryAcquire("job")).isEmpty();
            assertThat(locks.tryAcquire("job")).as("not reentrant, same space").isEmpty();
            assertThat(other().tryAcquire("job", Mode.SHARED)).isEmpty();
        }
        try (Lease again = other().tryAcquire("job").orElseThrow()) {
            assertThat(again.isValid()).isTrue();
        }
    }

    @Test
    void shared_manyHolders_coexistAndExcludeWriters() {
        Lease a = locks.tryAcquire("catalog", Mode.SHARED).orElseThrow();
        Lease b = other().tryAcquire("catalog", Mode.SHARED).orElseThrow();
        Lease c = locks.tryAcquire("catalog", Mode.SHARED).orElseThrow();
        assertThat(other().tryAcquire("catalog")).isEmpty();
        a.close();
        b.close();
        assertThat(other().tryAcquire("catalog")).isEmpty();
        c.close();
        other().tryAcquire("catalog").orElseThrow().close();
    }

    @Test
    void close_isIdempotentAndWorksFromAnotherThread() throws Exception {
        Lease lease = locks.tryAcquire("job").orElseThrow();
        CompletableFuture.runAsync(lease::close, pool).get(10, TimeUnit.SECONDS);
        lease.close();
        lease.close();
        other().tryAcquire("job").orElseThrow().close();
    }

    @Test
    void closedLease_renew_throwsIllegalState() {
        Lease lease = locks.tryAcquire("job").orElseThrow();
        lease.close();
        assertThatThrownBy(lease::renew)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    @Test
    void renew_heldLease_staysValid() {
        try (Lease lease = locks.tryAcquire("job").orElseThrow()) {
            lease.renew();
            assertThat(lease.isValid()).isTrue();
        }
    }

    @Test
    void token_increasesWithEveryAcquisition() {
        long last = 0;
        for (int i = 0; i < 20; i++) {
            LockSpace s = i % 2 == 0 ? locks : other();
            Mode m = i % 3 == 0 ? Mode.SHARED : Mode.EXCLUSIVE;
            try (Lease l = s.tryAcquire("fenced", m).orElseThrow()) {
                assertThat(l.token()).as("acquisition %d", i).isGreaterThan(last);
                last = l.token();
            }
        }
        try (Lease a = locks.tryAcquire("fenced", Mode.SHARED).orElseThrow();
                Lease b = other().tryAcquire("fenced", Mode.SHARED).orElseThrow()) {
            assertThat(a.token()).isGreaterThan(last);
            assertThat(b.token()).isGreaterThan(a.token());
        }
    }

    @Test
    void acquire_timeout_throwsWithFactsAndHoldsNothing() throws Exception {
        try (Lease held = other().tryAcquire("busy").orElseThrow()) {
            assertThatThrownBy(() -> locks.acquire("busy", Duration.ofMillis(300)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining("'busy'")
                    .hasMessageContaining("not acquired after")
                    .satisfies(e -> assertThat(((LockTimeoutException) e).waited())
                            .isGreaterThanOrEqualTo(Duration.ofMillis(300)));
            // The timed-out writer gave up its place: readers are not kept out by it.
            assertThatThrownBy(() -> locks.acquire("busy", Mode.SHARED, Duration.ZERO))
                    .isInstanceOf(LockTimeoutException.class);
        }
        other().tryAcquire("busy", Mode.SHARED).orElseThrow().close();
        locks.tryAcquire("busy").orElseThrow().close();
    }

    @Test
    void acquire_waiting_isWokenByRelease() throws Exception {
        Lease held = other().tryAcquire("handoff").orElseThrow();
        Future<Lease> waiter = pool.submit(() -> locks.acquire("handoff", Timing.seconds(60)));
        await().during(Duration.ofMillis(200)).atMost(Timing.seconds(5)).until(() -> !waiter.isDone());
        held.close();
        Lease got = waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(got.isValid()).isTrue();
        assertThat(got.token()).isGreaterThan(held.token());
        got.close();
    }

    @Test
    void acquire_forever_isWokenByRelease() throws Exception {
        Lease held = other().tryAcquire("forever").orElseThrow();
        Future<Lease> waiter = pool.submit(() -> locks.acquire("forever"));
        held.close();
        waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void acquire_interrupted_throwsAndHoldsNothing() throws Exception {
        try (Lease held = other().tryAcquire("intr").orElseThrow()) {
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            CountDownLatch started = new CountDownLatch(1);
            Thread t = new Thread(() -> {
                started.countDown();
                try {
                    locks.acquire("intr", Timing.seconds(60)).close();
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            started.await();
            t.interrupt();
            t.join(Timing.seconds(10).toMillis());
            assertThat(t.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        }
        other().tryAcquire("intr").orElseThrow().close();
    }

    @Test
    void acquire_withTheInterruptFlagSet_throwsEvenIfTheLockIsFree_andHoldsNothing() {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> locks.acquire("intr-free", Timing.seconds(10)))
                    .isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
        assertThat(locks.status("intr-free").isFree()).isTrue();
    }

    @Test
    void waitingWriter_keepsNewReadersOut() throws Exception {
        Lease reader = locks.tryAcquire("rw", Mode.SHARED).orElseThrow();
        LockSpace writerSpace = other();
        Future<Lease> writer = pool.submit(() -> writerSpace.acquire("rw", Mode.EXCLUSIVE, Timing.seconds(60)));
        LockSpace third = other();
        // Once the writer waits, a new reader must not get in, although only readers hold the lock.
        await().atMost(Timing.seconds(10)).until(() -> {
            if (writer.isDone()) {
                writer.get(); // the writer failed: say why (it must still be waiting)
                throw new AssertionError("the writer returned while a reader held the lock");
            }
            Optional<Lease> r = third.tryAcquire("rw", Mode.SHARED);
            r.ifPresent(Lease::close);
            return r.isEmpty();
        });
        assertThat(writer.isDone()).isFalse();
        reader.close();
        Lease w = writer.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(third.tryAcquire("rw", Mode.SHARED)).isEmpty();
        w.close();
        third.tryAcquire("rw", Mode.SHARED).orElseThrow().close();
    }

    @Test
    void names_thatCollideWhenMangled_areDistinctLocks() {
        List<String> names = List.of(
                "a.b", "a_b", "a/b", "../x", "x", "A.B", "a%2Fb", ".x-a%2Fb", "..", ".", " ", "a b", "données/日本語 🔒");
        List<Lease> held = new ArrayList<>();
        try {
            for (String n : names) {
                held.add(locks.tryAcquire(n)
                        .orElseThrow(() -> new AssertionError("'" + n + "' was held by another name")));
            }
            for (String n : names) {
                assertThat(other().tryAcquire(n)).as("'%s' is held", n).isEmpty();
            }
        } finally {
            held.forEach(Lease::close);
        }
    }

    @Test
    void badNames_areRejectedWithTheRule() {
        assertThatThrownBy(() -> locks.tryAcquire(""))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessageContaining("empty");
        assertThatThrownBy(() -> locks.tryAcquire("a\0b"))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessageContaining("NUL");
        assertThatThrownBy(() -> locks.tryAcquire("a\nb"))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessageContaining("control");
        assertThatThrownBy(() -> locks.tryAcquire("x".repeat(LockSpace.MAX_NAME_LENGTH + 1)))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessageContaining("limit is " + LockSpace.MAX_NAME_LENGTH);
        assertThatThrownBy(() -> locks.tryAcquire("a\uD800b"))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessageContaining("surrogate");
        assertThatThrownBy(() -> locks.tryAcquire(null)).isInstanceOf(NullPointerException.class);
    }

    @Test
    void longestName_works() {
        String longest = "é".repeat(LockSpace.MAX_NAME_LENGTH);
        try (Lease l = locks.tryAcquire(longest).orElseThrow()) {
            assertThat(other().tryAcquire(longest)).isEmpty();
            assertThat(other().tryAcquire(longest.substring(1) + "e"))
                    .isPresent()
                    .get()
                    .satisfies(Lease::close);
            assertThat(locks.status(longest).holders()).hasSize(1);
        }
    }

    @Test
    void status_showsHolderAndFree() {
        assertThat(locks.status("shown").isFree()).isTrue();
        try (Lease l = locks.tryAcquire("shown").orElseThrow()) {
            LockInfo info = other().status("shown");
            assertThat(info.holders()).hasSize(1);
            assertThat(info.holders().get(0).mode()).isEqualTo(Mode.EXCLUSIVE);
            assertThat(info.holders().get(0).ownerId()).contains(l.owner().id());
            assertThat(info.holders().get(0).token()).hasValue(l.token());
            assertThat(info.holders().get(0).pid())
                    .isEqualTo(ProcessHandle.current().pid());
        }
        assertThat(locks.status("shown").isFree()).isTrue();
    }

    @Test
    void status_showsEverySharedHolder() {
        try (Lease a = locks.tryAcquire("many", Mode.SHARED).orElseThrow();
                Lease b = other().tryAcquire("many", Mode.SHARED).orElseThrow()) {
            LockInfo info = locks.status("many");
            assertThat(info.holders())
                    .hasSize(2)
                    .allSatisfy(h -> assertThat(h.mode()).isEqualTo(Mode.SHARED));
            assertThat(info.holders())
                    .extracting(h -> h.ownerId().orElse("?"))
                    .containsExactlyInAnyOrder(a.owner().id(), b.owner().id());
        }
    }

    @Test
    void list_includesUsedNames() {
        try (Lease a = locks.tryAcquire("listed/one").orElseThrow()) {
            locks.tryAcquire("listed-two").orElseThrow().close();
            List<LockInfo> all = other().list();
            assertThat(all).extracting(LockInfo::name).contains("listed/one", "listed-two");
            assertThat(all.stream()
                            .filter(i -> i.name().equals("listed/one"))
                            .findFirst()
                            .orElseThrow()
                            .holders())
                    .hasSize(1);
        }
    }

    @Test
    void closingTheSpace_releasesItsLeases() {
        LockSpace s = other();
        Lease l = s.tryAcquire("closing").orElseThrow();
        s.close();
        assertThat(l.isValid()).isFalse();
        locks.tryAcquire("closing").orElseThrow().close();
        assertThatThrownBy(() -> s.tryAcquire("closing"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    // ------------------------------------------------------------------ lease loss, on every backend that can show it

    @Test
    void lockTakenAway_renewSaysLost_listenersAreTold_andAnotherMayTakeIt() {
        Lease l = locks.tryAcquire("taken").orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        l.onLost(told::add);
        assumeTrue(takeAway(l), "this backend cannot take a lock away in a test");
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("'taken'");
        assertThat(told).as("listeners run before renew() throws").hasSize(1);
        assertThat(l.isValid()).isFalse();
        try (Lease next = other().tryAcquire("taken").orElseThrow()) {
            assertThat(next.token()).as("the taker's token").isGreaterThan(l.token());
        }
        l.close(); // a late close of a lost lease changes nothing
        assertThat(locks.status("taken").isFree()).isTrue();
    }

    @Test
    void lockTakenAway_aLateCloseNeverFreesTheNewHoldersLock() {
        Lease l = locks.tryAcquire("late").orElseThrow();
        assumeTrue(takeAway(l), "this backend cannot take a lock away in a test");
        try (Lease next = other().tryAcquire("late").orElseThrow()) {
            l.close();
            assertThat(next.isValid()).isTrue();
            assertThat(locks.tryAcquire("late"))
                    .as("still held by the new holder")
                    .isEmpty();
        }
    }

    @Test
    void lossPushedByTheBackend_isToldAtOnce() {
        Lease l = locks.tryAcquire("pushed").orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        l.onLost(told::add);
        assumeTrue(hooks().pushLoss(l), "this backend pushes no loss");
        await().atMost(Timing.seconds(10)).until(() -> told.size() == 1);
        assertThat(l.isValid()).isFalse();
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class);
    }

    @Test
    void backendCutOff_leaseIsDeclaredLostBeforeItsDeadline_andRecovers() {
        FakeTicker ticker = new FakeTicker();
        ManualScheduler timer = new ManualScheduler(ticker);
        try (LockSpace s = openOnFakeTime(ticker, timer)) {
            Lease l = s.lock("cut").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow();
            List<LockLostException> told = new CopyOnWriteArrayList<>();
            l.onLost(told::add);
            assumeTrue(hooks().cut(), "this backend cannot be cut off in a test");
            try {
                timer.advance(Duration.ofSeconds(7));
                assertThat(told).as("still within the lease, renewals retried").isEmpty();
                assertThat(l.isValid()).isTrue();
                timer.advance(Duration.ofMillis(1100)); // the loss point of a 10s lease: 8s
                assertThat(told)
                        .singleElement()
                        .satisfies(e -> assertThat(e).hasMessageContaining("renewal kept failing"));
                assertThat(l.isValid()).as("lost before its deadline").isFalse();
                assertThatThrownBy(() -> s.tryAcquire("other")).isInstanceOf(LockBackendException.class);
            } finally {
                hooks().restore();
            }
            timer.advance(Duration.ofSeconds(10));
            s.tryAcquire("after").orElseThrow().close();
        }
    }

    /**
     * The lease rule: a lease lost at its loss point tells its holder at once and is never
     * released to others before its end unless the holder closes it. Fake time for the holder;
     * the backend and the other space keep real time, so the lease is far from over there.
     */
    @Test
    void fixedLease_lostAtItsLossPoint_staysHeldAgainstOthers_untilItsHolderClosesIt() {
        FakeTicker ticker = new FakeTicker();
        ManualScheduler timer = new ManualScheduler(ticker);
        try (LockSpace s = openOnFakeTime(ticker, timer)) {
            Lease l = s.lock("margin")
                    .lease(Duration.ofSeconds(30))
                    .fixedLease()
                    .tryAcquire()
                    .orElseThrow();
            assumeTrue(!l.validUntil().equals(Instant.MAX), "locks of this backend do not expire");
            List<LockLostException> told = new CopyOnWriteArrayList<>();
            l.onLost(told::add);
            timer.advance(Duration.ofSeconds(25));
            assertThat(told).as("told at the loss point, 24s of 30s").hasSize(1);
            assertThat(l.isValid()).isFalse();
            assertThat(other().tryAcquire("margin"))
                    .as("not released before the end of the lease")
                    .isEmpty();
            l.close();
            assertThat(told).hasSize(1);
            other().tryAcquire("margin").orElseThrow().close();
        }
    }

    /**
     * A fixed lease shorter than the 100ms that renewed leases need (ShedLock's short
     * {@code lockAtMostFor}) is honoured where locks expire, and ignored by kernel locks.
     */
    @Test
    void fixedLeaseOf50ms_isAccepted_andFreesTheLockAfterIt() {
        Lease l = locks.lock("short")
                .lease(Duration.ofMillis(50))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        try {
            assumeTrue(!l.validUntil().equals(Instant.MAX), "locks of this backend do not expire");
            LockSpace o = other();
            await().atMost(Timing.seconds(10)).until(() -> {
                Optional<Lease> next = o.tryAcquire("short");
                next.ifPresent(Lease::close);
                return next.isPresent();
            });
            assertThat(l.isValid()).isFalse();
        } finally {
            l.close();
        }
    }

    @Test
    void tokens_ofTheSameName_increaseAcrossSpacesAndModes() {
        long last = 0;
        for (int i = 0; i < 6; i++) {
            LockSpace s = i % 2 == 0 ? locks : other();
            try (Lease l = s.tryAcquire("fenced", i % 3 == 0 ? Mode.SHARED : Mode.EXCLUSIVE)
                    .orElseThrow()) {
                assertThat(l.token()).as("acquisition %d", i).isGreaterThan(last);
                last = l.token();
            }
        }
    }

    @Test
    void threads_incrementingACounter_loseNothing() throws Exception {
        int threads = 8;
        int rounds = 100;
        long[] counter = {0};
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            LockSpace s = t % 2 == 0 ? locks : other();
            fs.add(pool.submit(() -> {
                for (int i = 0; i < rounds; i++) {
                    try (Lease l = s.acquire("counter", Timing.seconds(60))) {
                        long v = counter[0];
                        Thread.yield();
                        counter[0] = v + 1;
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS);
        }
        assertThat(counter[0]).isEqualTo((long) threads * rounds);
    }
}
