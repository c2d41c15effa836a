package dev.interlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's documented contract for a {@code LockProvider} and {@code SimpleLock.extend}, one rule
 * per test, on one backend. Two lock spaces on the same namespace play two nodes; both run on one
 * {@link FakeTicker} and {@link ManualScheduler}, so leases run out and hold-at-least times pass
 * without waiting (backends that judge expiry by a server's clock override {@link #assertFreedAfter}).
 * The rules are the ones ShedLock's {@code LockProvider}, {@code SimpleLock} and {@code extend}
 * Javadoc state and its provider test suite (test-support's {@code AbstractLockProviderIntegrationTest}
 * and {@code AbstractExtensibleLockProviderIntegrationTest}) checks, written here for Interlock; where
 * a backend cannot keep one ({@code flock:} has no expiry) the test asserts what the README's
 * ShedLock table says instead.
 *
 * <p>The rules, from ShedLock's Javadoc and README: a lock is granted to one node at a time; a busy
 * lock is {@code Optional.empty()} at once; {@code lockAtMostFor} frees a lock whose holder never
 * unlocks; an unlock before {@code lockAtLeastFor} keeps the lock until then, after it frees at
 * once; {@code unlock()} and {@code extend()} on a lock already unlocked or extended throw
 * {@code IllegalStateException}; {@code extend} returns a new lock valid for the new
 * {@code lockAtMostFor} and {@code lockAtLeastFor} from now, or empty if the lock cannot be
 * extended.
 */
abstract class ShedLockProviderContract {
    /** The URI of a fresh namespace, the same for every call within one test. */
    protected abstract String uri();

    /** The lockAtMostFor of the tests. Backends judged by a server's real clock use a short one. */
    protected Duration d() {
        return Duration.ofSeconds(10);
    }

    /** False for {@code flock:}, whose locks do not expire. */
    protected boolean locksExpire() {
        return true;
    }

    protected final FakeTicker ticker = new FakeTicker();
    protected final ManualScheduler timer = new ManualScheduler(ticker);
    protected LockSpace spaceA;
    protected LockSpace spaceB;
    protected InterlockLockProvider a;
    protected InterlockLockProvider b;
    private final List<SimpleLock> toUnlock = new ArrayList<>();

    @BeforeEach
    void open() {
        spaceA = Interlock.builder(uri())
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .open();
        spaceB = Interlock.builder(uri())
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .open();
        a = new InterlockLockProvider(spaceA);
        b = new InterlockLockProvider(spaceB);
    }

    @AfterEach
    void close() {
        spaceA.close();
        spaceB.close();
    }

    protected static LockConfiguration cfg(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    protected LockConfiguration cfg(String name) {
        return cfg(name, d(), Duration.ZERO);
    }

    /** Node B takes {@code name} and gives it back: it must be free now. */
    protected void assertFree(String name) {
        Optional<SimpleLock> l = b.lock(cfg(name));
        assertThat(l).as("'%s' is free for node B", name).isPresent();
        l.get().unlock();
    }

    protected void assertHeld(String name) {
        assertThat(b.lock(cfg(name)))
                .as("'%s' is still held: node B is refused", name)
                .isEmpty();
    }

    /**
     * After a lock was unlocked with a hold-at-least time {@code wait} ahead: moves time past it and
     * checks that the lock is free. {@code dir:} and the server-clock backends override this.
     */
    protected void assertFreedAfter(Duration wait, String name) {
        timer.advance(wait);
        assertFree(name);
    }

    private static Duration times(Duration d, double f) {
        return Duration.ofNanos((long) (d.toNanos() * f));
    }

    // ------------------------------------------------------------------ LockProvider.lock

    @Test
    void lock_free_isGranted_andABusyLockIsEmptyAtOnce() {
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        long t0 = System.nanoTime();
        assertThat(b.lock(cfg("job"))).as("another node").isEmpty();
        assertThat(a.lock(cfg("job")))
                .as("the same node again: ShedLock locks are not reentrant")
                .isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - t0))
                .as("a busy lock is not waited for")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(b.lock(cfg("other-job")))
                .as("other names are independent")
                .isPresent()
                .get()
                .satisfies(SimpleLock::unlock);
        l.unlock();
        assertFree("job");
    }

    @Test
    void lock_rightAfterUnlock_isGrantedAgain_tenTimes_andRefusedWhileHeld() {
        for (int i = 0; i < 10; i++) {
            SimpleLock l = a.lock(cfg("job")).orElseThrow();
            assertThat(a.lock(cfg("job"))).as("round %d: held", i).isEmpty();
            assertThat(b.lock(cfg("job")))
                    .as("round %d: held, for node B too", i)
                    .isEmpty();
            l.unlock();
        }
        assertFree("job");
    }

    @Test
    void unlock_withoutLockAtLeastFor_freesAtOnce() {
        a.lock(cfg("job")).orElseThrow().unlock();
        assertFree("job");
        a.lock(cfg("job")).orElseThrow().unlock();
    }

    @Test
    void unlock_beforeLockAtLeastFor_keepsTheLockUntilThen() {
        Duration atLeast = times(d(), 0.5);
        SimpleLock l = a.lock(cfg("job", d(), atLeast)).orElseThrow();
        timer.advance(times(d(), 0.1));
        l.unlock();
        assertHeld("job");
        timer.advance(times(d(), 0.3));
        assertHeld("job");
        assertFreedAfter(times(d(), 0.1).plusMillis(1), "job");
    }

    @Test
    void unlock_beforeLockAtLeastFor_isFreeThen_forANodeThatFirstLooksThen() {
        SimpleLock l = a.lock(cfg("job", d(), times(d(), 0.5))).orElseThrow();
        timer.advance(times(d(), 0.1));
        l.unlock();
        // node B fires the job only now, as a cron job on another host would
        assertFreedAfter(times(d(), 0.4).plusMillis(1), "job");
    }

    @Test
    void unlock_beforeLockAtLeastFor_thenTheProcessExits_keepsTheLockUntilThen_only() {
        SimpleLock l = a.lock(cfg("job", d(), times(d(), 0.5))).orElseThrow();
        timer.advance(times(d(), 0.1));
        l.unlock();
        spaceA.close(); // the application stops (or dies) right after the job
        if (!locksExpire()) {
            assertFree("job"); // flock: the kernel frees a lock with the process that held it
            return;
        }
        assertHeld("job");
        timer.advance(times(d(), 0.3));
        assertHeld("job");
        assertFreedAfter(times(d(), 0.1).plusMillis(1), "job");
    }

    @Test
    void unlock_afterLockAtLeastFor_freesAtOnce() {
        SimpleLock l = a.lock(cfg("job", d(), times(d(), 0.5))).orElseThrow();
        timer.advance(times(d(), 0.6));
        l.unlock();
        assertFree("job");
    }

    /**
     * A hung task's lock is kept until {@code lockAtMostFor}, never freed sooner (the holder is told
     * it is lost a fifth earlier, to stop in time, but others wait for the end), and is free for
     * another node right after it.
     */
    @Test
    void lockAtMostFor_hungHolder_heldToTheEnd_andFreeRightAfter() {
        a.lock(cfg("hung")).orElseThrow();
        timer.advance(times(d(), 0.5));
        assertHeld("hung");
        timer.advance(times(d(), 0.45)); // past the holder's loss point (4/5), before the end
        assertHeld("hung");
        if (locksExpire()) {
            assertThat(InterlockShedLock.currentToken())
                    .as("the holder knows it can no longer count on the lock")
                    .isEmpty();
            assertFreedAfter(times(d(), 0.05).plusMillis(2), "hung");
        } else {
            timer.advance(d());
            assertHeld("hung"); // flock: kept by this process until unlock (or exit)
        }
    }

    /** ShedLock's {@code shouldTimeout}: a lockAtMostFor of 50 ms is granted (not refused) and runs out. */
    @Test
    void lockAtMostFor_under100ms_isGranted_andRunsOut() {
        Duration atMost = Duration.ofMillis(50);
        SimpleLock l = a.lock(cfg("short", atMost, Duration.ZERO)).orElseThrow();
        assertThat(b.lock(cfg("short", atMost, Duration.ZERO))).isEmpty();
        timer.advance(atMost.plusMillis(5));
        if (locksExpire()) {
            awaitFree("short", atMost);
        } else {
            assertHeld("short");
            l.unlock();
            assertFree("short");
        }
    }

    /** ShedLock's {@code shouldNotBeAbleToExtendExpiredLock}, with its lockAtMostFor of 1 ms. */
    @Test
    void extend_afterA1msLockAtMostForRanOut_isEmpty_andTheLockIsFree() {
        SimpleLock l = a.lock(cfg("short", Duration.ofMillis(1), Duration.ZERO)).orElseThrow();
        timer.advance(Duration.ofMillis(2));
        Optional<SimpleLock> extended = l.extend(Duration.ofSeconds(10), Duration.ZERO);
        if (locksExpire()) {
            assertThat(extended).as("the lock ran out before the extension").isEmpty();
            awaitFree("short", Duration.ofMillis(1));
        } else {
            assertThat(extended).as("flock: does not run out, so it extends").isPresent();
            extended.get().unlock();
            assertFree("short");
        }
    }

    /**
     * Polls node B until {@code name} is free: at once on the fake ticker, within the bound on a
     * backend whose server clock runs the lock out.
     */
    private void awaitFree(String name, Duration atMost) {
        org.awaitility.Awaitility.await()
                .atMost(dev.interlock.testkit.Timing.seconds(15))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> {
                    SimpleLock l = b.lock(cfg(name, atMost, Duration.ZERO)).orElse(null);
                    if (l != null) {
                        l.unlock();
                    }
                    return l != null;
                });
    }

    /**
     * ShedLock's {@code fuzzTestShouldPass}: threads of two nodes take turns on two names, each
     * increments a plain counter under the lock; not one increment may be lost.
     */
    @Test
    void fuzz_threadsOfTwoNodes_countExactly() throws Exception {
        int threads = 8;
        int perThread = 40;
        long[] counters = new long[2];
        List<Thread> workers = new ArrayList<>();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            int job = t % 2;
            InterlockLockProvider node = t % 4 < 2 ? a : b;
            LockConfiguration c = cfg("fuzz" + job, Duration.ofMinutes(5), Duration.ZERO);
            Thread w = new Thread(() -> {
                try {
                    go.await();
                    for (int done = 0; done < perThread; ) {
                        Optional<SimpleLock> l = node.lock(c);
                        if (l.isPresent()) {
                            long n = counters[job];
                            Thread.yield(); // let another thread in here if the lock lets it
                            counters[job] = n + 1;
                            l.get().unlock();
                            done++;
                        }
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                }
            });
            w.start();
            workers.add(w);
        }
        go.countDown();
        for (Thread w : workers) {
            w.join(dev.interlock.testkit.Timing.seconds(120).toMillis());
            assertThat(w.isAlive()).as("a fuzz thread is stuck").isFalse();
        }
        assertThat(failed.get()).isNull();
        assertThat(counters).containsExactly(threads / 2 * perThread, threads / 2 * perThread);
    }

    @Test
    void lockAtMostFor_mustBePositive_withAMessageSayingWhatToSet() {
        assertThatThrownBy(() -> a.lock(cfg("job", Duration.ZERO, Duration.ZERO)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'job'")
                .hasMessageContaining("lockAtMostFor must be positive");
        assertFree("job");
    }

    // ------------------------------------------------------------------ SimpleLock.unlock

    @Test
    void unlock_twice_throwsIllegalState() {
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        l.unlock();
        assertThatThrownBy(l::unlock)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("already unlocked or extended");
        assertThatThrownBy(() -> l.extend(d(), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void unlock_fromAnotherThread_releases() throws Exception {
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        Thread t = new Thread(l::unlock);
        t.start();
        t.join(30_000);
        assertFree("job");
        assertThat(InterlockShedLock.currentToken())
                .as("the taker's thread forgets it too")
                .isEmpty();
    }

    // ------------------------------------------------------------------ SimpleLock.extend

    @Test
    void extend_returnsANewLock_andTheOldOneCanNoLongerBeUsed() {
        SimpleLock first = a.lock(cfg("job")).orElseThrow();
        SimpleLock second = first.extend(d(), Duration.ZERO).orElseThrow();
        assertThat(second).isNotSameAs(first);
        assertThatThrownBy(first::unlock).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> first.extend(d(), Duration.ZERO)).isInstanceOf(IllegalStateException.class);
        assertHeld("job");
        second.unlock();
        assertFree("job");
    }

    @Test
    void extend_keepsTheLockPastTheFirstLockAtMostFor() {
        SimpleLock first = a.lock(cfg("job")).orElseThrow();
        timer.advance(times(d(), 0.5));
        SimpleLock second = first.extend(d(), Duration.ZERO).orElseThrow();
        timer.advance(times(d(), 0.7)); // 1.2 lockAtMostFor after the lock: only the extension holds it
        assertHeld("job");
        assertThat(InterlockShedLock.currentLease())
                .get()
                .satisfies(l -> assertThat(l.isValid()).isTrue());
        second.unlock();
        assertFree("job");
    }

    @Test
    void extend_newLockAtMostFor_isMeasuredFromTheExtension() {
        assumeTrue(locksExpire(), "meaningful for expiring locks only");
        SimpleLock first = a.lock(cfg("job")).orElseThrow();
        timer.advance(times(d(), 0.5));
        SimpleLock second = first.extend(times(d(), 0.5), Duration.ZERO).orElseThrow();
        timer.advance(times(d(), 0.6)); // past the extension's lockAtMostFor, before the first's
        assertFree("job");
        second.unlock(); // the lease is gone already: nothing to release, and no error
    }

    @Test
    void extend_lockAtLeastFor_countsFromTheExtension_longer() {
        SimpleLock first = a.lock(cfg("job")).orElseThrow();
        timer.advance(times(d(), 0.5));
        SimpleLock second = first.extend(d(), times(d(), 0.5)).orElseThrow();
        second.unlock();
        assertHeld("job");
        timer.advance(times(d(), 0.4));
        assertHeld("job");
        assertFreedAfter(times(d(), 0.1).plusMillis(1), "job");
    }

    @Test
    void extend_lockAtLeastFor_countsFromTheExtension_shorter() {
        SimpleLock first = a.lock(cfg("job", d(), times(d(), 0.5))).orElseThrow();
        SimpleLock second = first.extend(d(), Duration.ZERO).orElseThrow();
        second.unlock();
        assertFree("job"); // the first lockAtLeastFor no longer applies
    }

    @Test
    void extend_afterTheLockRanOut_isEmpty_andTheLockIsSpent() {
        assumeTrue(locksExpire(), "meaningful for expiring locks only");
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        timer.advance(d().multipliedBy(2));
        SimpleLock taken = b.lock(cfg("job")).orElseThrow();
        assertThat(l.extend(d(), Duration.ZERO)).isEmpty();
        assertThatThrownBy(l::unlock).isInstanceOf(IllegalStateException.class);
        assertThat(a.lock(cfg("job"))).as("the new holder keeps it").isEmpty();
        taken.unlock();
    }

    @Test
    void extend_badDurations_throwAndLeaveTheLockUsable() {
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        assertThatThrownBy(() -> l.extend(Duration.ZERO, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("lockAtMostFor must be positive");
        assertThatThrownBy(() -> l.extend(d(), d().plusSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be between zero and lockAtMostFor");
        l.unlock();
        assertFree("job");
    }

    // ------------------------------------------------------------------ fencing token

    @Test
    void currentToken_isTheLeaseToken_whileHeldOnThisThread_andIncreases() {
        assertThat(InterlockShedLock.currentToken()).isEmpty();
        assertThatThrownBy(InterlockShedLock::requireToken)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no ShedLock lock from InterlockLockProvider is held on this thread");
        SimpleLock l = a.lock(cfg("job")).orElseThrow();
        long first = InterlockShedLock.requireToken();
        assertThat(first).isPositive();
        assertThat(InterlockShedLock.currentLease().orElseThrow().token()).isEqualTo(first);
        SimpleLock extended = l.extend(d(), Duration.ZERO).orElseThrow();
        assertThat(InterlockShedLock.currentToken())
                .as("same lease after extend")
                .hasValue(first);
        extended.unlock();
        assertThat(InterlockShedLock.currentToken()).isEmpty();

        b.lock(cfg("job")).orElseThrow().unlock();
        SimpleLock again = a.lock(cfg("job")).orElseThrow();
        assertThat(InterlockShedLock.requireToken())
                .as("two acquisitions later")
                .isGreaterThan(first);
        again.unlock();
    }

    @Test
    void currentToken_nestedLocks_innermostFirst() throws Exception {
        SimpleLock outer = a.lock(cfg("outer")).orElseThrow();
        long outerToken = InterlockShedLock.requireToken();
        SimpleLock inner = a.lock(cfg("inner")).orElseThrow();
        long innerToken = InterlockShedLock.requireToken();
        assertThat(InterlockShedLock.currentToken("outer")).hasValue(outerToken);
        assertThat(InterlockShedLock.currentToken("inner")).hasValue(innerToken);
        AtomicLong seen = new AtomicLong(-1);
        Thread t = new Thread(() -> seen.set(InterlockShedLock.currentToken().orElse(0)));
        t.start();
        t.join(30_000);
        assertThat(seen).as("another thread holds nothing").hasValue(0);
        inner.unlock();
        assertThat(InterlockShedLock.currentToken()).hasValue(outerToken);
        outer.unlock();
        assertThat(InterlockShedLock.currentToken()).isEqualTo(OptionalLong.empty());

        SimpleLock first = a.lock(cfg("outer")).orElseThrow();
        SimpleLock second = a.lock(cfg("inner")).orElseThrow();
        long secondToken = InterlockShedLock.requireToken();
        first.unlock(); // out of order
        assertThat(InterlockShedLock.currentToken()).hasValue(secondToken);
        assertThat(InterlockShedLock.currentToken("outer")).isEmpty();
        second.unlock();
        assertThat(InterlockShedLock.currentToken()).isEmpty();
    }

    // ------------------------------------------------------------------ the option

    @Test
    void renewingInBackground_keepsTheLockPastLockAtMostFor_untilUnlock() {
        SimpleLock l = a.renewingInBackground().lock(cfg("long")).orElseThrow();
        for (int i = 0; i < 6; i++) {
            timer.advance(times(d(), 0.5));
        }
        assertHeld("long");
        l.unlock();
        assertFree("long");
    }

    @Test
    void renewingInBackground_lockAtMostForTooShortToRenew_isAFixedLock() {
        SimpleLock l = a.renewingInBackground()
                .lock(cfg("short", Duration.ofMillis(50), Duration.ZERO))
                .orElseThrow();
        assertThat(b.lock(cfg("short", Duration.ofMillis(50), Duration.ZERO))).isEmpty();
        l.unlock();
        assertFree("short");
    }

    @Test
    void keepAliveLockProvider_extendsThroughExtend_pastLockAtMostFor() {
        // ShedLock's own keep-alive wrapper (needs lockAtMostFor of 30s or more) extends at half of it.
        Duration atMost = Duration.ofMinutes(1);
        SimpleLock l = new KeepAliveLockProvider(a, timer)
                .lock(cfg("kept", atMost, Duration.ZERO))
                .orElseThrow();
        for (int i = 0; i < 6; i++) {
            timer.advance(Duration.ofSeconds(20));
        }
        assertHeld("kept");
        l.unlock();
        assertFree("kept");
    }

    // ------------------------------------------------------------------ ShedLock's own executor

    @Test
    void lockingTaskExecutor_runsOnce_skipsWhenBusy_andExtendsAndAssertsThroughShedLock() throws Throwable {
        LockingTaskExecutor exec = new DefaultLockingTaskExecutor(a);
        AtomicInteger runs = new AtomicInteger();
        AtomicLong token = new AtomicLong();
        AtomicLong afterExtend = new AtomicLong();
        LockingTaskExecutor.TaskResult<Boolean> r = exec.executeWithLock(
                () -> {
                    LockAssert.assertLocked();
                    token.set(InterlockShedLock.requireToken());
                    LockExtender.extendActiveLock(d(), Duration.ZERO);
                    afterExtend.set(InterlockShedLock.requireToken());
                    // another node fires the same job meanwhile (another thread: ShedLock runs a nested call of
                    // a lock this thread holds without locking): it is skipped
                    Thread other = new Thread(() -> new DefaultLockingTaskExecutor(b)
                            .executeWithLock((Runnable) runs::incrementAndGet, cfg("export")));
                    other.start();
                    other.join(30_000);
                    return true;
                },
                cfg("export"));
        assertThat(r.wasExecuted()).isTrue();
        assertThat(runs).as("the second node skipped").hasValue(0);
        assertThat(token.get()).isPositive();
        assertThat(afterExtend.get())
                .as("the token is the lease's, unchanged by extend")
                .isEqualTo(token.get());
        assertThat(InterlockShedLock.currentToken()).isEmpty();
        assertFree("export");
    }
}
