package dev.interlock.spring;

import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockView;
import dev.interlock.Ticker;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Consumer;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@code LockRegistry} over any Interlock {@link LockSpace} ({@code flock:},
 * {@code dir:}, {@code jdbc:}, {@code redis:}, {@code mem:}), in place of {@code JdbcLockRegistry}
 * or {@code RedisLockRegistry}.
 *
 * <pre>{@code
 * @Bean LockSpace lockSpace() { return Interlock.open("jdbc:postgresql://db/app"); }
 * @Bean InterlockLockRegistry lockRegistry(LockSpace space) { return new InterlockLockRegistry(space); }
 * }</pre>
 *
 * <p><b>Keys</b> are lock names: {@link #obtain(Object)} takes a {@link String} (like Spring's JDBC
 * and Redis registries), any name the space accepts. The registry does not own the space: close
 * the space (Spring does, for a {@code LockSpace} bean) to release what is still held.
 *
 * <p><b>The Spring rules</b> hold per lock object, as with {@code JdbcLockRegistry}: one
 * {@link InterlockLock} per key (the registry hands out the same object until it is expired),
 * reentrant per thread (a hold count), unlocked only by the thread that locked it
 * ({@link IllegalMonitorStateException} otherwise), released when the count comes back to zero.
 * They come from the core's {@link LockView}; the registry adds the Spring interfaces on top.
 *
 * <p><b>The lease underneath</b> is the truth across processes, and it is not per thread: each
 * first hold is one acquisition of the space, with a fencing token, a time to live and a
 * background renewal (the space's watchdog, so no {@code TaskScheduler} is needed;
 * {@link #setRenewalTaskScheduler} is ignored). A lease can be lost (renewal failing until the
 * lease ran out, a lock broken by an operator, a lock file removed); the {@code Lock} interface
 * cannot say so, so the registry says it three ways: the listener given to
 * {@link #setLockLostListener} runs on a background thread as soon as the space declares the
 * loss (before the lease runs out when renewal is failing); {@link InterlockLock#lease()} shows
 * the calling thread's lease, its {@link Lease#isValid()} and its fencing {@link Lease#token()},
 * the number to send with every write that must not come from a stale holder; and
 * {@link InterlockLock#unlock()} of a lost lock throws {@link ConcurrentModificationException}
 * after freeing the thread's hold, as Spring's JDBC and Redis locks do when their row or key
 * expired.
 *
 * <p><b>Time to live:</b> a lock is acquired with the time to live given to
 * {@link InterlockLock#lock(Duration)} / {@link InterlockLock#tryLock(Duration, Duration)}, else
 * {@link #setDefaultTtl}, else the space's default lease (30s). It is how long others wait after
 * this process dies or stops renewing; renewal keeps it held as long as the holder lives, unless
 * {@link #setRenewInBackground(boolean) setRenewInBackground(false)} asks for Spring's JDBC
 * behaviour (the lock frees itself one time to live after acquisition unless
 * {@link #renewLock(Object)} is called). Kernel locks ({@code flock:}) do not expire and ignore
 * it.
 */
public final class InterlockLockRegistry
        implements ExpirableLockRegistry<InterlockLockRegistry.InterlockLock>, RenewableLockRegistry<InterlockLockRegistry.InterlockLock> {
    private final LockSpace space;
    private final Ticker ticker;
    private final ConcurrentMap<String, InterlockLock> locks = new ConcurrentHashMap<>();
    private volatile Duration defaultTtl;
    private volatile boolean renewInBackground = true;
    private volatile Consumer<LockLostException> lostListener;

    /** A registry over {@code space}, which it uses but does not close. */
    public InterlockLockRegistry(LockSpace space) {
        this(space, Ticker.system());
    }

    /**
     * A registry over {@code space} whose {@link #expireUnusedOlderThan(long)} measures idle time
     * on {@code ticker} (a fake one in tests).
     */
    public InterlockLockRegistry(LockSpace space, Ticker ticker) {
        this.space = Objects.requireNonNull(space, "space");
        this.ticker = Objects.requireNonNull(ticker, "ticker");
    }

    /** The lock space underneath. */
    public LockSpace space() {
        return space;
    }

    /**
     * The time to live of acquisitions that do not give one (default: the space's default lease).
     *
     * @throws IllegalArgumentException if not positive
     */
    public void setDefaultTtl(Duration ttl) {
        this.defaultTtl = positive(ttl, "default time to live");
    }

    /**
     * Whether leases are renewed in the background while held (default true). With false, a lock
     * frees itself one time to live after it was acquired unless {@link #renewLock} extends it:
     * Spring's JDBC behaviour, for code written around it.
     */
    public void setRenewInBackground(boolean renew) {
        this.renewInBackground = renew;
    }

    /**
     * Told, on a background thread, when the lease of a held lock is lost (not when it is
     * unlocked); {@link LockLostException#lockName()} says which. Work under that lock must stop.
     * Applies to acquisitions made after this call.
     */
    public void setLockLostListener(Consumer<LockLostException> listener) {
        this.lostListener = listener;
    }

    /**
     * The lock of {@code lockKey}, the same object for the same key until
     * {@link #expireUnusedOlderThan} forgets it. Acquires nothing.
     *
     * @throws IllegalArgumentException if the key is not a String
     * @throws dev.interlock.InvalidLockNameException if the space does not accept the name
     */
    @Override
    public InterlockLock obtain(Object lockKey) {
        InterlockLock l = current(name(lockKey));
        synchronized (l) {
            l.lastUsed = ticker.read();
        }
        return l;
    }

    private InterlockLock current(String name) {
        return locks.computeIfAbsent(name, n -> new InterlockLock(this, n, space.asLock(n)));
    }

    private static String name(Object lockKey) {
        if (lockKey instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("lock keys are lock names: pass a String, not "
                + (lockKey == null ? "null" : "a " + lockKey.getClass().getName() + " (use its toString() if that names the lock)"));
    }

    /**
     * Forgets the lock objects that no thread holds or is acquiring and that were last obtained or
     * locked (the start of the last acquisition) more than {@code age} milliseconds ago. A forgotten object stays safe to use: it then
     * acts through the registry's current object for its key, so one key never has two objects
     * excluding each other in this JVM.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = ticker.read();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, age));
        for (InterlockLock l : locks.values()) {
            synchronized (l) {
                if (l.active == 0 && !l.view.isLocked() && now - l.lastUsed > ageNanos) {
                    l.retired = true;
                    locks.remove(l.name, l);
                }
            }
        }
    }

    /** How many lock objects the registry keeps now (for tests and monitoring). */
    public int size() {
        return locks.size();
    }

    /**
     * Extends the lease of {@code lockKey}'s lock by its time to live (and checks the lock is
     * still ours).
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     * @throws LockLostException if the lock is gone; the lease is then lost
     * @throws dev.interlock.LockBackendException if the backend could not be reached; the lease stays valid until its deadline
     */
    @Override
    public void renewLock(Object lockKey) {
        heldLease(lockKey).renew();
    }

    /**
     * Extends the lease of {@code lockKey}'s lock to {@code ttl} from now, for this and later
     * renewals. On {@code dir:} a lease cannot become longer than the one it was acquired with.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold the lock
     * @throws IllegalArgumentException if {@code ttl} is not positive
     * @throws LockLostException if the lock is gone; the lease is then lost
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        positive(ttl, "time to live");
        heldLease(lockKey).renew(ttl);
    }

    private Lease heldLease(Object lockKey) {
        String name = name(lockKey);
        InterlockLock l = locks.get(name);
        Optional<Lease> lease = l == null ? Optional.empty() : l.lease();
        return lease.orElseThrow(() -> new IllegalMonitorStateException(
                "cannot renew lock '" + name + "': this thread does not hold it (lock it first, on the object obtain() returned)"));
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }

    /** The options of one acquisition: time to live, renewal, lost listener. */
    private Consumer<LockRequest> options(Duration ttl) {
        Duration lease = ttl != null ? positive(ttl, "time to live") : defaultTtl;
        boolean renew = renewInBackground;
        Consumer<LockLostException> listener = lostListener;
        return r -> {
            if (lease != null) {
                r.lease(lease);
            }
            if (!renew) {
                r.fixedLease();
            }
            if (listener != null) {
                r.onLost(listener);
            }
        };
    }

    @Override
    public String toString() {
        return "InterlockLockRegistry[" + space.uri() + ", " + locks.size() + " locks]";
    }

    /**
     * A named lock of the registry: a {@link DistributedLock} whose rules are
     * {@link InterlockLockRegistry described on the registry}.
     */
    public static final class InterlockLock implements DistributedLock {
        private final InterlockLockRegistry registry;
        private final String name;
        private final LockView view;
        /** Guarded by this: threads inside an acquiring call, and the last use. */
        private int active;
        private long lastUsed;
        /** Set once, under this, when the registry forgets the object; read without it. */
        private volatile boolean retired;

        private InterlockLock(InterlockLockRegistry registry, String name, LockView view) {
            this.registry = registry;
            this.name = name;
            this.view = view;
            this.lastUsed = registry.ticker.read();
        }

        /**
         * The object that acts for this key in an acquiring call, marked as in use so that the
         * registry cannot forget it before the call ends: this one, or the registry's current one
         * if this one was forgotten.
         */
        private InterlockLock enter() {
            InterlockLock l = this;
            while (true) {
                synchronized (l) {
                    if (!l.retired) {
                        l.active++;
                        l.lastUsed = registry.ticker.read();
                        return l;
                    }
                }
                l = registry.current(name);
            }
        }

        private void exit() {
            synchronized (this) {
                active--;
            }
        }

        /**
         * The object that acts for this key in a call that acquires nothing (unlock, queries): a
         * forgotten object never holds (only an idle one is forgotten, and it then sends every
         * acquisition to the current one), so one that is not forgotten yet can be used as it is.
         */
        private InterlockLock target() {
            return retired ? registry.current(name) : this;
        }

        /** The lock name (the key). */
        public String name() {
            return name;
        }

        /**
         * The lease of the calling thread's holding, if it holds this lock: its fencing
         * {@link Lease#token()}, {@link Lease#isValid()}, {@link Lease#validUntil()}. Empty if the
         * calling thread does not hold the lock.
         */
        public Optional<Lease> lease() {
            return target().view.lease();
        }

        /** True if the calling thread holds this lock (whatever its lease's validity). */
        public boolean isHeldByCurrentThread() {
            return target().view.isHeldByCurrentThread();
        }

        /** True if some thread of this JVM holds this lock. Says nothing of other processes. */
        public boolean isLocked() {
            return target().view.isLocked();
        }

        /** The calling thread's hold count (0 if it does not hold the lock). */
        public int getHoldCount() {
            return target().view.getHoldCount();
        }

        /** Waits as long as it takes, uninterruptibly (as {@link java.util.concurrent.locks.Lock#lock()} demands). */
        @Override
        public void lock() {
            lock((Duration) null);
        }

        /**
         * {@link #lock()} with a time to live for the lease, if this call acquires (a reentry does
         * not change the lease).
         */
        @Override
        public void lock(Duration ttl) {
            Consumer<LockRequest> options = registry.options(ttl);
            InterlockLock l = enter();
            try {
                l.view.lock(options);
            } finally {
                l.exit();
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            Consumer<LockRequest> options = registry.options(null);
            InterlockLock l = enter();
            try {
                l.view.lockInterruptibly(options);
            } finally {
                l.exit();
            }
        }

        /** One attempt, no wait; true if the calling thread holds the lock after it. */
        @Override
        public boolean tryLock() {
            try {
                return tryLock(Duration.ZERO, null);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), null);
        }

        /**
         * Waits up to {@code waitTime} for the lock, acquiring it with the time to live
         * {@code ttl} (the registry's default if null); a reentry does not change the lease.
         */
        @Override
        public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
            Objects.requireNonNull(waitTime, "waitTime");
            Consumer<LockRequest> options = registry.options(ttl);
            InterlockLock l = enter();
            try {
                return l.view.tryLock(waitTime, options);
            } finally {
                l.exit();
            }
        }

        /**
         * Releases one hold of the calling thread, and the lease with the last one.
         *
         * @throws IllegalMonitorStateException if the calling thread does not hold the lock
         * @throws ConcurrentModificationException if this releases the last hold and the lease had
         *         been lost: the hold is freed, but the work done under it may have run unlocked
         * @throws dev.interlock.LockBackendException if the backend failed to release; a lease then frees when it runs out
         */
        @Override
        public void unlock() {
            target().release();
        }

        private void release() {
            Lease lease = view.getHoldCount() == 1 ? view.lease().orElse(null) : null;
            boolean lost = lease != null && !lease.isValid();
            view.unlock();
            if (lost) {
                throw new ConcurrentModificationException("lock '" + name + "' in " + registry.space.uri()
                        + " was lost before unlock (lease " + lease.owner().id() + ", fencing token " + lease.token()
                        + "): another holder may have had it; the work done under it may have run unlocked");
            }
        }

        /** Not supported: a lock shared by processes has no condition queues. */
        @Override
        public Condition newCondition() {
            return view.newCondition();
        }

        @Override
        public String toString() {
            return "InterlockLock[" + view + "]";
        }
    }
}
