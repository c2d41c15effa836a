package dev.interlock.spring;

import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockView;
import dev.interlock.Ticker;
import dev.interlock.spi.support.LockNames;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * ({@link IllegalMonitorStateException} otherwise), released when the count comes back to zero:
 * the rules of the core's {@link LockView}, which each lock object uses.
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
 * <p><b>A reentry checks the lease.</b> A lock call by the thread that holds the lock
 * ({@code tryLock()}, as Spring's {@code LockRegistryLeaderInitiator} does as its heartbeat)
 * counts one more hold only if the lease is still valid ({@link Lease#isValid()}: held, and its
 * loss point not passed, even if this process was stopped and no timer has run since); with
 * {@link #setRenewInBackground(boolean) setRenewInBackground(false)} it renews the lease too, as
 * Spring's JDBC lock refreshes its row. Otherwise the call fails ({@code tryLock} returns false,
 * {@code lock()} throws {@link LockLostException}) and the thread's holding is dropped, every
 * hold of it: {@code unlock()} then throws {@link IllegalMonitorStateException}, and the next
 * lock call makes a new acquisition. A leader whose lease ran out so steps down at its next
 * heartbeat, and nobody else is given the lock before the lease's end (see {@link Lease}).
 *
 * <p><b>Where it differs from Spring's registries:</b> {@code unlock()} knows of a loss that this
 * process has seen (the lease ran out on the local monotonic clock, a renewal or
 * {@link #renewLock} found the lock gone, or the backend announced a break, as {@code redis:}
 * does). A lock broken in the store and not seen since (on {@code jdbc:}: until the next renewal,
 * a third of the lease) is released normally: the release removes only this lease's own row or
 * key, so the new holder keeps the lock, but no exception says so (Spring's delete counts the rows
 * it removed). The fencing token is the guard against such a holder. {@link #renewLock} of a lost
 * lock throws {@link LockLostException}, not {@code IllegalStateException} as
 * {@code JdbcLockRegistry} does.
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
        implements ExpirableLockRegistry<InterlockLockRegistry.InterlockLock>,
                RenewableLockRegistry<InterlockLockRegistry.InterlockLock> {
    private final LockSpace space;
    private final Ticker ticker;
    private final ConcurrentMap<String, InterlockLock> locks = new ConcurrentHashMap<>();
    private volatile Duration defaultTtl;
    private volatile boolean renewInBackground = true;
    private volatile Consumer<LockLostException> lostListener;
    /**
     * The options of acquisitions that give no time to live, built once per setting rather than
     * per acquisition (null: nothing to set). Rebuilt by the setters.
     */
    private volatile Consumer<LockRequest> defaultOptions;

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
        defaultOptions = options(null);
    }

    /**
     * Whether leases are renewed in the background while held (default true). With false, a lock
     * frees itself one time to live after it was acquired unless {@link #renewLock} extends it:
     * Spring's JDBC behaviour, for code written around it.
     */
    public void setRenewInBackground(boolean renew) {
        this.renewInBackground = renew;
        defaultOptions = options(null);
    }

    /**
     * Told, on a background thread, when the lease of a held lock is lost (not when it is
     * unlocked); {@link LockLostException#lockName()} says which. Work under that lock must stop.
     * Applies to acquisitions made after this call.
     */
    public void setLockLostListener(Consumer<LockLostException> listener) {
        this.lostListener = listener;
        defaultOptions = options(null);
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
        String name = name(lockKey);
        InterlockLock l = locks.get(name);
        if (l == null) {
            return current(name); // new: made now, which counts as its last use
        }
        l.used();
        return l;
    }

    private InterlockLock current(String name) {
        return locks.computeIfAbsent(name, n -> new InterlockLock(this, LockNames.validate(n)));
    }

    private static String name(Object lockKey) {
        if (lockKey instanceof String s) {
            return s;
        }
        throw new IllegalArgumentException("lock keys are lock names: pass a String, not "
                + (lockKey == null
                        ? "null"
                        : "a " + lockKey.getClass().getName() + " (use its toString() if that names the lock)"));
    }

    /**
     * Forgets the lock objects that no thread holds or is acquiring and that were not obtained or
     * locked for more than {@code age} milliseconds. A forgotten object stays safe to use: it then
     * acts through the registry's current object for its key, so one key never has two objects
     * excluding each other in this JVM.
     *
     * <p>Idle time is counted without reading a clock on every lock: from the object's creation,
     * or from the first call of this method that saw it used since the call before. An object is
     * therefore never forgotten sooner than {@code age} after its last use, and at most one
     * interval between calls later (call it periodically, as Spring's own registries expect).
     */
    @Override
    public synchronized void expireUnusedOlderThan(long age) {
        long now = ticker.read();
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(0, age));
        for (InterlockLock l : locks.values()) {
            int uses = l.uses();
            if (uses != l.seenUses) {
                l.seenUses = uses;
                l.seenAt = now;
            } else if (now - l.seenAt > ageNanos && l.retire()) {
                locks.remove(l.name, l);
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
        return lease.orElseThrow(() -> new IllegalMonitorStateException("cannot renew lock '" + name
                + "': this thread does not hold it (lock it first, on the object obtain() returned)"));
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }

    /** The options of one acquisition (time to live, renewal, lost listener); null if none applies. */
    private Consumer<LockRequest> options(Duration ttl) {
        Duration lease = ttl != null ? positive(ttl, "time to live") : defaultTtl;
        boolean renew = renewInBackground;
        Consumer<LockLostException> listener = lostListener;
        if (lease == null && renew && listener == null) {
            return null;
        }
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
     *
     * <p>The per-thread holding (owner, hold count, lease, the reentry's lease check) is the core's
     * {@link LockView}; this class adds what Spring asks beyond it: a time to live per call, a
     * reentry that renews a lease nothing renews in the background, an unlock that says a lease
     * was lost, and the registry's expiry. For the expiry it keeps one word without a lock: how
     * many threads are inside an acquiring call, and whether the object was forgotten (then it
     * acts through the registry's current object for its key).
     */
    public static final class InterlockLock implements DistributedLock {
        private static final VarHandle STATE;
        private static final VarHandle USES;
        /** The bit of {@link #state} set once the registry has forgotten this object. */
        private static final int RETIRED = 1 << 30;
        /** The options of an acquisition that sets nothing. */
        private static final Consumer<LockRequest> NO_OPTIONS = r -> {};

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                STATE = lookup.findVarHandle(InterlockLock.class, "state", int.class);
                USES = lookup.findVarHandle(InterlockLock.class, "uses", int.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private final InterlockLockRegistry registry;
        private final String name;
        private final LockView view;
        /** Threads inside an acquiring call, plus {@link #RETIRED}. Changed atomically. */
        private volatile int state;
        /** The lease is not renewed in the background: a reentry renews it (owner thread only). */
        private boolean renewOnReentry;
        /** Bumped (opaquely: a lost bump only delays expiry) by every obtain and acquisition. */
        private int uses;
        /** The registry's view of the last use, guarded by the registry's expiry (synchronized). */
        private int seenUses;

        private long seenAt;

        private InterlockLock(InterlockLockRegistry registry, String name) {
            this.registry = registry;
            this.name = name;
            this.view = registry.space.asLock(name);
            this.seenAt = registry.ticker.read();
        }

        private void used() {
            USES.setOpaque(this, (int) USES.getOpaque(this) + 1);
        }

        private int uses() {
            return (int) USES.getOpaque(this);
        }

        /**
         * Marks this object forgotten if no thread is acquiring through it or holds it: true if it
         * was (the caller then removes it from the registry).
         */
        private boolean retire() {
            if (!STATE.compareAndSet(this, 0, RETIRED)) {
                return false; // someone is acquiring through it
            }
            if (view.isLocked()) {
                state = 0; // held: an owner is set before its acquiring call leaves (see enter/exit)
                return false;
            }
            return true;
        }

        /**
         * The object that acts for this key in an acquiring call, marked as in use so that the
         * registry cannot forget it before the call ends: this one, or the registry's current one
         * if this one was forgotten.
         */
        private InterlockLock enter() {
            InterlockLock l = this;
            while (true) {
                int s = l.state;
                if ((s & RETIRED) == 0) {
                    if (STATE.compareAndSet(l, s, s + 1)) {
                        return l;
                    }
                } else {
                    InterlockLock next = registry.current(name);
                    if (next == l) {
                        Thread.onSpinWait(); // the registry is removing it (or taking it back) this moment
                    }
                    l = next;
                }
            }
        }

        private void exit() {
            STATE.getAndAdd(this, -1);
        }

        /**
         * The object that acts for this key in a call that acquires nothing (unlock, queries): a
         * forgotten object never holds (only an idle one is forgotten, and it then sends every
         * acquisition to the current one), so one that is not forgotten yet can be used as it is.
         */
        private InterlockLock target() {
            return (state & RETIRED) == 0 ? this : registry.current(name);
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
            Consumer<LockRequest> options = options(ttl);
            InterlockLock l = enter();
            try {
                l.renewIfReentry();
                boolean first = !l.view.isHeldByCurrentThread();
                l.view.lock(options);
                l.acquired(first);
            } finally {
                l.exit();
            }
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            InterlockLock l = enter();
            try {
                l.renewIfReentry();
                boolean first = !l.view.isHeldByCurrentThread();
                l.view.lockInterruptibly(options(null));
                l.acquired(first);
            } finally {
                l.exit();
            }
        }

        /** One attempt, no wait; true if the calling thread holds the lock after it. */
        @Override
        public boolean tryLock() {
            InterlockLock l = enter();
            try {
                l.renewIfReentry();
                boolean first = !l.view.isHeldByCurrentThread();
                return l.acquired(first, l.view.tryLock(options(null)));
            } finally {
                l.exit();
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
            Consumer<LockRequest> options = options(ttl);
            InterlockLock l = enter();
            try {
                l.renewIfReentry();
                boolean first = !l.view.isHeldByCurrentThread();
                return l.acquired(first, l.view.tryLock(waitTime, options));
            } finally {
                l.exit();
            }
        }

        private Consumer<LockRequest> options(Duration ttl) {
            Consumer<LockRequest> options = ttl == null ? registry.defaultOptions : registry.options(ttl);
            return options == null ? NO_OPTIONS : options;
        }

        /**
         * Before a lock call by the thread that holds this lock: renews the lease when nothing
         * renews it in the background, as Spring's JDBC lock refreshes its row. A lease found lost
         * is left to the view, whose reentry then drops the thread's holding and fails the call.
         */
        private void renewIfReentry() {
            if (renewOnReentry && view.isHeldByCurrentThread()) {
                Lease held = view.lease().orElseThrow();
                if (held.isValid()) {
                    try {
                        held.renew();
                    } catch (LockLostException e) {
                        // the lease is now invalid: the view's reentry check fails the call
                    }
                }
            }
        }

        private void acquired(boolean first) {
            acquired(first, true);
        }

        private boolean acquired(boolean first, boolean held) {
            if (held && first) {
                renewOnReentry = !registry.renewInBackground;
                used();
            }
            return held;
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
            LockView v = target().view;
            Lease held = v.getHoldCount() == 1 ? v.lease().orElseThrow() : null;
            boolean lost = held != null && !held.isValid();
            v.unlock(); // throws if the calling thread does not hold it
            if (lost) {
                throw new ConcurrentModificationException("lock '" + name + "' in " + registry.space.uri()
                        + " was lost before unlock (lease " + held.owner().id() + ", fencing token " + held.token()
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
            return "InterlockLock[" + target().view + "]";
        }
    }
}
