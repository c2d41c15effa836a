package dev.interlock.shedlock;

import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ShedLock's {@link ExtensibleLockProvider} over any Interlock {@link LockSpace}, so that
 * {@code @SchedulerLock} jobs and {@code LockingTaskExecutor} run on {@code flock:}, {@code dir:},
 * {@code jdbc:}, {@code redis:} or {@code mem:} with fencing tokens.
 *
 * <pre>{@code
 * LockSpace locks = Interlock.open("jdbc:?table=interlock_locks");   // one per application
 * LockProvider provider = new InterlockLockProvider(locks);
 * }</pre>
 *
 * <p><b>How ShedLock's terms map.</b>
 * <ul>
 * <li>{@code lockAtMostFor} is the lease, <em>fixed</em> by default (not renewed in the
 *     background): the lock frees itself after it even if the task hangs, which is ShedLock's
 *     promise, and nobody else gets it before {@code lockAtMostFor} unless the task unlocks. The
 *     task itself is told a fifth before the end (its lease's loss point: {@code isValid()} turns
 *     false, {@code onLost} runs), so that it can stop before others may enter. Pick
 *     {@code lockAtMostFor} well above the run time, as ShedLock advises. A {@code lockAtMostFor}
 *     under 100ms is a fixed lease even with {@link #renewingInBackground()}, too short to renew. {@link #renewingInBackground()} renews instead: the
 *     lock then lasts while this process runs and frees itself {@code lockAtMostFor} after it dies
 *     or loses touch.</li>
 * <li>{@code lockAtLeastFor} is {@link LockRequest#holdAtLeast(Duration)}: an unlock before it
 *     keeps the lock until then and frees it then (lease-based backends renew it one last time to
 *     end then, so it stays held even if this process exits, and this process releases it at that
 *     time).</li>
 * <li>Both are measured from the moment the lock is granted, on this host's monotonic clock,
 *     not from {@link LockConfiguration#getLockAtMostUntil()}'s wall-clock instant; the
 *     difference is the time {@code lock()} takes.</li>
 * <li>A busy lock returns {@link Optional#empty()} at once: the lock is tried once, never waited
 *     for, and ShedLock skips the execution.</li>
 * <li>{@code flock:} locks do not expire: {@code lockAtMostFor} is ignored there, and the lock is
 *     kept by this process until unlock (plus {@code lockAtLeastFor}) or until the process exits,
 *     when the kernel frees it at once; a hung task keeps it.</li>
 * <li>{@code dir:} judges a holder by the lease it recorded at acquisition: {@code extend} may
 *     keep or shorten {@code lockAtMostFor} but not lengthen it (it returns empty then). An early
 *     unlock frees at {@code lockAtLeastFor} as on the other backends; only if this process exits
 *     before then does a node that first looks after that time wait the time that was left at
 *     unlock (up to {@code lockAtLeastFor}) from its first look ({@code dir:} judges by what it observes, never by a wall clock).</li>
 * </ul>
 *
 * <p><b>The fencing token</b> of the lock a task runs under is {@link InterlockShedLock#currentToken()},
 * on the thread that called {@code lock()} (ShedLock runs the task there), until unlock.
 *
 * <p>Thread-safe; the returned locks are meant to be used by one thread, as ShedLock does.
 * Backend failures surface as {@link LockBackendException} from {@code lock()} (ShedLock then does
 * not run the task).
 */
public final class InterlockLockProvider implements ExtensibleLockProvider {
    private static final Logger log = LoggerFactory.getLogger(InterlockLockProvider.class);

    /** The shortest lease the core renews in the background. */
    static final long MIN_RENEWED_MS = 100;

    private final LockSpace space;
    private final boolean renew;

    /** A provider whose locks free themselves after {@code lockAtMostFor} (ShedLock's contract). */
    public InterlockLockProvider(LockSpace space) {
        this(space, false);
    }

    private InterlockLockProvider(LockSpace space, boolean renew) {
        this.space = Objects.requireNonNull(space, "space");
        this.renew = renew;
    }

    /**
     * A provider on the same space whose leases are renewed in the background every third of
     * {@code lockAtMostFor} while this process runs: a task may run longer than
     * {@code lockAtMostFor} and keep the lock (no need for {@code LockExtender}), and the lock
     * frees itself {@code lockAtMostFor} after the process dies, stops (SIGSTOP) or loses the
     * backend. A hung task in a live process keeps the lock: that is the trade. A
     * {@code lockAtMostFor} under 100 ms is too short to renew (a renewal every
     * third of it): such a lock is fixed, as from the plain provider.
     */
    public InterlockLockProvider renewingInBackground() {
        return new InterlockLockProvider(space, true);
    }

    /** The lock space this provider takes its locks in. */
    public LockSpace space() {
        return space;
    }

    /** True if leases are renewed in the background (see {@link #renewingInBackground()}). */
    public boolean renewsInBackground() {
        return renew;
    }

    /**
     * Tries once to take the lock {@code configuration.getName()} exclusively.
     *
     * @return the lock, or empty at once if someone holds it
     * @throws IllegalArgumentException if {@code lockAtMostFor} is not positive, or the name is not a valid Interlock name
     * @throws LockBackendException if the backend failed
     */
    @Override
    public Optional<SimpleLock> lock(LockConfiguration configuration) {
        Duration atMost = configuration.getLockAtMostFor();
        requirePositive(configuration.getName(), atMost);
        LockRequest request = space.lock(configuration.getName()).lease(atMost);
        if (!renew || atMost.toMillis() < MIN_RENEWED_MS) {
            request.fixedLease();
        }
        Duration atLeast = configuration.getLockAtLeastFor();
        if (!atLeast.isZero()) {
            request.holdAtLeast(atLeast);
        }
        Optional<Lease> lease = request.tryAcquire();
        if (lease.isEmpty()) {
            return Optional.empty();
        }
        Held held = new Held(lease.get(), !renew);
        InterlockShedLock.pushed(held);
        return Optional.of(new InterlockSimpleLock(held));
    }

    private static void requirePositive(String name, Duration atMost) {
        if (atMost.isNegative() || atMost.isZero()) {
            throw new IllegalArgumentException("ShedLock lock '" + name
                    + "': lockAtMostFor must be positive (it is the lease of" + " the lock), was " + atMost
                    + "; set lockAtMostFor, or defaultLockAtMostFor in @EnableSchedulerLock");
        }
    }

    @Override
    public String toString() {
        return "InterlockLockProvider[" + space.uri() + (renew ? ", renewing in background" : "") + "]";
    }

    /** One acquisition: the lease, shared by a lock and the locks that extend it. */
    static final class Held {
        final Lease lease;
        /** Not renewed in the background. */
        final boolean fixed;
        /** Unlocked, or given up by a failed extend (possibly on another thread than the taker's). */
        volatile boolean ended;
        /** The lock the taking thread held when it took this one (its chain in {@link InterlockShedLock}). */
        Held below;

        Held(Lease lease, boolean fixed) {
            this.lease = lease;
            this.fixed = fixed;
        }

        /** A fixed lease of a backend whose locks expire: left alone, it frees itself. */
        boolean fixedAndExpiring() {
            return fixed && !lease.validUntil().equals(Instant.MAX);
        }
    }

    /**
     * ShedLock's lock over one Interlock lease. Valid until unlocked or extended: after either,
     * every call throws {@link IllegalStateException} ({@link SimpleLock}'s contract); a successful
     * extend hands the same lease to a new lock.
     */
    private static final class InterlockSimpleLock implements SimpleLock {
        private final Held held;
        private boolean valid = true;

        InterlockSimpleLock(Held held) {
            this.held = held;
        }

        private synchronized void invalidate(String op) {
            if (!valid) {
                throw new IllegalStateException(
                        "ShedLock lock '" + held.lease.name() + "' was already unlocked or extended: " + op
                                + " the lock returned by the last extend() instead");
            }
            valid = false;
        }

        @Override
        public void unlock() {
            invalidate("unlock");
            end(held);
        }

        /**
         * Extends the lease to {@code lockAtMostFor} from now and makes the lock kept until
         * {@code lockAtLeastFor} from now when it is unlocked. This lock is invalid afterwards,
         * whatever the outcome.
         *
         * @return the new lock, or empty if the lock is lost, the backend could not be reached,
         *     or the backend cannot lengthen the lease ({@code dir:})
         */
        @Override
        public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
            String name = held.lease.name();
            requirePositive(name, lockAtMostFor);
            if (lockAtLeastFor.isNegative() || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
                throw new IllegalArgumentException("ShedLock lock '" + name + "': lockAtLeastFor (" + lockAtLeastFor
                        + ") must be between zero and lockAtMostFor (" + lockAtMostFor + ")");
            }
            invalidate("extend");
            try {
                held.lease.renew(lockAtMostFor);
            } catch (LockLostException | IllegalStateException e) {
                log.warn("ShedLock lock '{}' cannot be extended: {}", name, e.getMessage());
                endQuietly(held);
                return Optional.empty();
            } catch (LockBackendException | IllegalArgumentException e) {
                log.warn("ShedLock lock '{}' cannot be extended: {}", name, e.getMessage());
                if (held.fixedAndExpiring()) {
                    held.ended = true;
                    InterlockShedLock.popped(held); // still held until its deadline, then frees itself
                } else {
                    // A renewed lease (or a kernel lock) would stay for ever with no lock left to unlock it.
                    endQuietly(held);
                }
                return Optional.empty();
            }
            if (!held.lease.holdAtLeastFromNow(lockAtLeastFor)) {
                log.warn(
                        "ShedLock lock '{}' extended, but its lockAtLeastFor stays the first one: the lock space {} is not"
                                + " Interlock's own",
                        name,
                        held.lease);
            }
            return Optional.of(new InterlockSimpleLock(held));
        }
    }

    /** Releases (honouring hold-at-least) and forgets the thread's current lock. */
    private static void end(Held held) {
        held.ended = true;
        InterlockShedLock.popped(held);
        held.lease.close();
    }

    private static void endQuietly(Held held) {
        try {
            end(held);
        } catch (LockBackendException e) {
            log.warn("ShedLock lock '{}': {}", held.lease.name(), e.getMessage());
        }
    }
}
