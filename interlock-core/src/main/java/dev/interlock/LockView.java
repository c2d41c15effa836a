package dev.interlock;

import dev.interlock.spi.support.LockNames;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A named lock of a {@link LockSpace} seen as a {@link java.util.concurrent.locks.Lock}, for code
 * written against that interface ({@link LockSpace#asLock(String)}).
 *
 * <p><b>Reentrancy, explicitly:</b> like {@link ReentrantLock}, the view belongs to the thread that
 * locked it, which may lock it again (a hold count); only that thread may unlock it
 * ({@link IllegalMonitorStateException} otherwise), and the lock is released when the count comes
 * back to zero. Reentrancy is per view object: get one view per name and share it; two views of one
 * name exclude each other like any two holders (a thread locking the second waits for itself).
 * The lease underneath is not reentrant and not per thread (see {@link Lease}); this view adds
 * those rules on top.
 *
 * <p><b>Leases:</b> the lock is a lease like any other: renewed in the background, and it can be
 * lost (renewal failing, broken). The {@code Lock} interface has no way to say so: check
 * {@link #lease()} (its {@link Lease#isValid()}, its fencing {@link Lease#token()}) before work that
 * must not run unlocked, or acquire with {@link LockSpace#lock(String)} and an
 * {@link LockRequest#onLost} listener instead. {@link #unlock()} of a lost lease does not throw.
 *
 * <p><b>A reentry checks the lease:</b> locking again a view whose lease is no longer valid (lost,
 * or past its loss point) fails, as a first acquisition by another process may already be near:
 * {@link #tryLock()} and {@link #tryLock(long, TimeUnit)} return false, {@link #lock()} and
 * {@link #lockInterruptibly()} throw {@link LockLostException}. The thread's holding is dropped
 * then (every hold: {@link #unlock()} throws {@link IllegalMonitorStateException} and the next lock
 * makes a new acquisition), so that code which locks again as a heartbeat, as Spring's leader
 * initiator does, steps down and can later be elected anew. The lost lease is left to the core:
 * kept from others until its end, as every lease lost at its loss point is.
 *
 * <p>{@link #lock()} waits uninterruptibly, as the interface demands; {@link #lockInterruptibly()}
 * and {@link #tryLock(long, TimeUnit)} can be interrupted. {@link #newCondition()} is not
 * supported: a lock shared by processes has no condition queues.
 *
 * <p><b>Options:</b> {@link #lock(Consumer)}, {@link #lockInterruptibly(Consumer)} and
 * {@link #tryLock(Duration, Consumer)} take options for the acquisition they make (a lease, a
 * fixed lease, a lost-lock listener: {@link LockRequest}), for adapters whose own lock API has a
 * time-to-live per call. A reentry makes no acquisition, so its options are not used.
 */
public final class LockView implements Lock {
    private final LockSpace space;
    private final String name;
    private final Mode mode;
    /**
     * The holding thread, or null: written by that thread only (with release order, after its
     * hold count and lease), read by any. The view has no lock of its own, so that an adapter
     * built on it (Spring's registry) costs next to nothing over the direct API.
     */
    private volatile Thread owner;
    /** Writes {@link #owner} with release order only: no reader needs more, and a full fence costs. */
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(LockView.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The owner's hold count and lease: read and written by the owner thread only. */
    private int holds;

    private Lease lease;

    LockView(LockSpace space, String name, Mode mode) {
        this.space = Objects.requireNonNull(space, "space");
        this.name = Objects.requireNonNull(name, "name");
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    /** The lock name. */
    public String name() {
        return name;
    }

    /** The lease of the current holding, if the calling thread holds this view. */
    public Optional<Lease> lease() {
        return owner == Thread.currentThread() ? Optional.of(lease) : Optional.empty();
    }

    /** True if the calling thread holds this view (whatever the lease's validity). */
    public boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
    }

    /**
     * True if some thread of this JVM holds this view (like {@link ReentrantLock#isLocked()}): an
     * adapter that forgets idle views must not forget a held one. Says nothing of other views or
     * processes; {@link LockSpace#status(String)} does.
     */
    public boolean isLocked() {
        return owner != null;
    }

    /** The calling thread's hold count (0 if it does not hold the view). */
    public int getHoldCount() {
        return owner == Thread.currentThread() ? holds : 0;
    }

    /**
     * If the calling thread holds the view already, counts one more hold and returns true.
     *
     * @throws LockLostException if it does but the lease is no longer valid; the holding is dropped
     */
    private boolean reenter() {
        if (owner != Thread.currentThread()) {
            return false;
        }
        Lease held = lease;
        if (held.isValid()) {
            holds++;
            return true;
        }
        // Not closed: a lease lost at its loss point stays the core's, kept from others until its end.
        drop();
        throw new LockLostException(
                space.uri(),
                name,
                space.uri() + " - " + LockNames.quote(name)
                        + " was locked again by its holder, but its lease (token " + held.token()
                        + ") is no longer valid: the thread"
                        + " no longer holds it",
                null);
    }

    private void held(Lease l) {
        lease = l;
        holds = 1;
        OWNER.setRelease(this, Thread.currentThread()); // last: a reader that sees the owner sees its lease
    }

    private void drop() {
        lease = null;
        holds = 0;
        OWNER.setRelease(this, null);
    }

    @Override
    public void lock() {
        lock(NO_OPTIONS);
    }

    /** {@link #lock()}, with {@code options} for the acquisition if one is made (see the class comment). */
    public void lock(Consumer<? super LockRequest> options) {
        Objects.requireNonNull(options, "options");
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    lockInterruptibly(options);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        lockInterruptibly(NO_OPTIONS);
    }

    /** {@link #lockInterruptibly()}, with {@code options} for the acquisition if one is made (see the class comment). */
    public void lockInterruptibly(Consumer<? super LockRequest> options) throws InterruptedException {
        Objects.requireNonNull(options, "options");
        checkInterrupt();
        if (reenter()) {
            return;
        }
        held(request(options).acquire());
    }

    /** One attempt, no wait; false also for a reentry whose lease is no longer valid (see the class comment). */
    @Override
    public boolean tryLock() {
        return tryLock(NO_OPTIONS);
    }

    /**
     * {@link #tryLock()}, with {@code options} for the acquisition if one is made (see the class
     * comment). Like {@link #tryLock()}, and unlike a zero-timeout {@link #tryLock(Duration, Consumer)},
     * it ignores the thread's interrupt status.
     */
    public boolean tryLock(Consumer<? super LockRequest> options) {
        Objects.requireNonNull(options, "options");
        try {
            if (reenter()) {
                return true;
            }
        } catch (LockLostException e) {
            return false;
        }
        Optional<Lease> l = request(options).tryAcquire();
        l.ifPresent(this::held);
        return l.isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), NO_OPTIONS);
    }

    /**
     * {@link #tryLock(long, TimeUnit)}, with {@code options} for the acquisition if one is made (see
     * the class comment). A zero timeout makes one attempt.
     */
    public boolean tryLock(Duration timeout, Consumer<? super LockRequest> options) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(options, "options");
        checkInterrupt();
        try {
            if (reenter()) {
                return true;
            }
        } catch (LockLostException e) {
            return false;
        }
        try {
            held(request(options).acquire(timeout.isNegative() ? Duration.ZERO : timeout));
            return true;
        } catch (LockTimeoutException e) {
            return false;
        }
    }

    /** As {@link ReentrantLock}: an interruptible lock call on an interrupted thread throws, even a reentry. */
    private void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException(space.uri() + " - interrupted before locking " + LockNames.quote(name));
        }
    }

    private static final Consumer<LockRequest> NO_OPTIONS = r -> {};

    private LockRequest request(Consumer<? super LockRequest> options) {
        LockRequest r = space.lock(name);
        options.accept(r);
        return r.mode(mode);
    }

    @Override
    public void unlock() {
        Thread holder = owner;
        if (holder != Thread.currentThread()) {
            throw new IllegalMonitorStateException(LockNames.quote(name) + " is not held by this thread"
                    + (holder == null ? "" : " (" + holder.getName() + " holds it)"));
        }
        if (--holds > 0) {
            return;
        }
        Lease release = lease;
        drop();
        release.close();
    }

    /** Not supported: a lock shared by processes has no condition queues. */
    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException(
                "a lock shared by processes has no conditions; use a queue or a notification instead");
    }

    @Override
    public String toString() {
        Thread holder = owner;
        return "LockView[" + space.uri() + " " + LockNames.quote(name) + " " + mode.shortName()
                + (holder == null ? " free here" : " held by " + holder.getName()) + "]";
    }
}
