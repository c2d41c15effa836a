package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lease under the registry's locks on one backend, as a Spring user of {@code JdbcLockRegistry}
 * or {@code RedisLockRegistry} meets it: background renewal, a fixed time to live
 * ({@code setRenewInBackground(false)}, Spring's JDBC behaviour), {@code renewLock}, and a lock lost
 * while held (its time to live ran out, or an operator or another process broke it in the store).
 *
 * <p>This process's space runs on a {@link FakeTicker} and a {@link ManualScheduler}: its renewals,
 * loss checks and lost-lock listeners run only when the test moves time. A second space on the
 * same namespace plays another process, on real time. Backends judged by a server's clock
 * ({@code jdbc:}, {@code redis:}) never see the fake time: a lease that runs out here is released
 * by its holder (as a lost lease always is), which is what lets the other process in.
 */
abstract class RegistryLeaseContract {
    protected final FakeTicker ticker = new FakeTicker();
    protected final ManualScheduler scheduler = new ManualScheduler(ticker);
    protected final List<LockLostException> told = new CopyOnWriteArrayList<>();
    protected LockSpace space;
    protected LockSpace other;
    protected InterlockLockRegistry registry;

    /** A fresh namespace; both spaces of one test open it. */
    protected abstract String newUri();

    @BeforeEach
    void open() {
        String uri = newUri();
        space = Interlock.builder(uri)
                .ticker(ticker)
                .scheduler(scheduler)
                .executor(scheduler)
                .defaultLease(Duration.ofSeconds(30))
                .open();
        other = Interlock.open(uri);
        registry = new InterlockLockRegistry(space, ticker);
        registry.setLockLostListener(told::add);
    }

    @AfterEach
    void close() {
        space.close();
        other.close();
    }

    private static Lease lease(InterlockLock lock) {
        return lock.lease().orElseThrow();
    }

    /** The lock is held in the store by {@code lease}'s owner: the other process is refused. */
    private void assertHeldBy(Lease lease, String name) {
        assertThat(other.status(name).holders())
                .as("holders of '%s' in the store", name)
                .anySatisfy(h -> assertThat(h.ownerId()).contains(lease.owner().id()));
        assertThat(other.tryAcquire(name)).as("the other process is refused").isEmpty();
    }

    @Test
    void aHeldLock_isRenewedInTheBackground_andStaysOursInTheStore() {
        InterlockLock lock = registry.obtain("job");
        lock.lock(Duration.ofSeconds(9));
        for (int i = 0; i < 10; i++) {
            scheduler.advance(Duration.ofSeconds(3));
        }
        assertThat(lease(lock).isValid()).as("30s of a 9s time to live").isTrue();
        assertHeldBy(lease(lock), "job");
        assertThat(told).isEmpty();
        lock.unlock();
        assertThat(other.tryAcquire("job"))
                .as("free after unlock")
                .isPresent()
                .get()
                .satisfies(Lease::close);
    }

    @Test
    void aFixedTimeToLive_endsTheLock_theOtherProcessGetsIt_andUnlockSaysSo() throws Exception {
        registry.setRenewInBackground(false);
        InterlockLock lock = registry.obtain("job");
        assertThat(lock.tryLock(Duration.ZERO, Duration.ofSeconds(5))).isTrue();
        long token = lease(lock).token();
        scheduler.advance(Duration.ofMillis(3900));
        assertThat(lease(lock).isValid()).isTrue();
        assertHeldBy(lease(lock), "job");
        scheduler.advance(Duration.ofSeconds(2));
        assertThat(lease(lock).isValid())
                .as("5s time to live, unrenewed (declared lost a fifth before its end)")
                .isFalse();
        assertThat(told).as("the listener was told").hasSize(1);
        Lease next =
                other.tryAcquire("job").orElseThrow(() -> new AssertionError("the other process should get the lock"));
        assertThat(next.token()).isGreaterThan(token);
        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("lock 'job' in " + space.uri() + " was lost before unlock")
                .hasMessageContaining("fencing token " + token);
        assertThat(lock.getHoldCount()).as("the hold is freed all the same").isZero();
        assertThat(next.isValid()).isTrue();
        assertHeldBy(next, "job");
        next.close();
    }

    @Test
    void renewLock_extendsAFixedLease_byItsTimeToLiveOrTheOneGiven() {
        registry.setRenewInBackground(false);
        InterlockLock lock = registry.obtain("job");
        lock.lock(Duration.ofSeconds(10));
        scheduler.advance(Duration.ofSeconds(6));
        registry.renewLock("job");
        scheduler.advance(Duration.ofSeconds(6));
        assertThat(lease(lock).isValid())
                .as("12s after acquisition, renewed at 6s")
                .isTrue();
        registry.renewLock("job", Duration.ofSeconds(20));
        scheduler.advance(Duration.ofSeconds(15));
        assertThat(lease(lock).isValid()).isTrue();
        assertHeldBy(lease(lock), "job");
        scheduler.advance(Duration.ofSeconds(5));
        assertThat(lease(lock).isValid()).as("the 20s ran out, unrenewed").isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    @Test
    void aLockBrokenInTheStore_isFoundByRenewLock_toldToTheListener_andUnlockThrows() {
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        lock.lock();
        Lease lease = lease(lock);
        assertThat(other.breakLock("job", lease.owner().id())).isTrue();
        assertThatThrownBy(() -> registry.renewLock("job")).isInstanceOf(LockLostException.class);
        assertThat(told).hasSize(1);
        assertThat(told.get(0).lockName()).isEqualTo("job");
        assertThat(lease.isValid()).isFalse();
        lock.unlock();
        assertThatThrownBy(lock::unlock).as("the last hold tells").isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.isLocked()).isFalse();
        InterlockLock again = registry.obtain("job");
        assertThat(again.tryLock()).as("usable again after the loss").isTrue();
        assertThat(lease(again).token()).isGreaterThan(lease.token());
        again.unlock();
    }

    @Test
    void aLockBrokenInTheStore_isFoundByTheWatchdog_beforeUnlock() {
        InterlockLock lock = registry.obtain("job");
        lock.lock(Duration.ofSeconds(30));
        assertThat(other.breakLock("job", lease(lock).owner().id())).isTrue();
        scheduler.advance(Duration.ofSeconds(11));
        assertThat(told).as("the renewal at 10s found it gone").hasSize(1);
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
    }

    /**
     * Broken and taken by another process, then unlocked here before any renewal could notice: the
     * release must leave the new holder's lock alone (it removes only this lease's own entry), and
     * {@code unlock()} throws only if this process was told of the break meanwhile.
     */
    @Test
    void unlockingALockBrokenAndTakenMeanwhile_leavesTheNewHolderAlone() {
        InterlockLock lock = registry.obtain("job");
        lock.lock();
        Lease mine = lease(lock);
        assertThat(other.breakLock("job", mine.owner().id())).isTrue();
        Lease theirs = other.tryAcquire("job")
                .orElseThrow(() -> new AssertionError("the other process should get the broken lock"));
        Optional<Throwable> thrown = Optional.empty();
        try {
            lock.unlock();
        } catch (ConcurrentModificationException e) {
            thrown = Optional.of(e);
        }
        if (!toldOfBreaks()) {
            assertThat(thrown)
                    .as("nothing told this process of the break: unlock cannot know")
                    .isEmpty();
        }
        assertThat(lock.getHoldCount()).isZero();
        assertThat(theirs.isValid()).isTrue();
        assertThat(other.status("job").holders())
                .as("the new holder keeps the lock")
                .anySatisfy(h -> assertThat(h.ownerId()).contains(theirs.owner().id()));
        assertThat(registry.obtain("job").tryLock())
                .as("and this process is refused")
                .isFalse();
        theirs.close();
        assertThat(registry.obtain("job").tryLock()).isTrue();
        registry.obtain("job").unlock();
    }

    /**
     * True if the backend may tell a holder of a break before its next renewal ({@code redis:}
     * publishes it), so that an unlock right after a break may already know, or not yet.
     */
    protected boolean toldOfBreaks() {
        return false;
    }
}
