package dev.interlock.redis;

import dev.interlock.HolderInfo;
import dev.interlock.LockBackendException;
import dev.interlock.Mode;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.QueuePlace;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One acquisition of a {@code redis:} lock.
 *
 * <ol>
 *   <li>Each try is one acquire script. A try that fails only reads who blocks it, except in an
 *       attempt that waits: from its first wait on, each try also keeps its place in the lock's
 *       queue for {@link #QUEUE_LEASE_MAX} at most, so a waiting writer keeps new readers out.</li>
 *   <li>The first wait subscribes to the lock's channel (waiting, bounded, until the server has
 *       confirmed it) and returns at once, so the try that queues us comes after the subscription:
 *       a release after that try finds us queued and publishes, and the notice cannot be missed
 *       for want of a subscription. When the channel is subscribed already (another waiter of the
 *       process watches it) and the caller is going to wait ({@link AcquireSpec#waits()}), the
 *       first try queues at once: one script less for each contended acquisition.</li>
 *   <li>Later waits last until a notice, or the jittered poll interval, or the moment the first
 *       blocker's lease runs out on the server (a holder that died publishes nothing), or a third
 *       of the queue lease (to keep our place), whichever comes first.</li>
 *   <li>A writer (or a permit) of a space that has just released the lock sends the fence value
 *       its release left ({@link dev.interlock.spi.support.Barging}): while the lock still bears
 *       it, the script lets the writer pass queued waiters, a bounded number of times in a row.</li>
 *   <li>A queued writer or permit waiter is known to its space: a release of the space whose
 *       script grants it the lock or the freed permit passes the grant on ({@link #handOver}),
 *       and the next try returns it without a script.</li>
 *   <li>Closing without a grant gives the place in the queue up (and wakes the others). If a try
 *       failed without an answer it may have been granted unseen: closing then also releases
 *       whatever this owner might hold. If that gets no answer either, the leave is sent again in
 *       the background until the server answers ({@link RedisLeftovers}), and a try that the
 *       server runs after this attempt stopped waiting for it grants nothing ({@link ServerDeadlines}).</li>
 * </ol>
 */
final class RedisAttempt implements Attempt {
    private static final Log log = Log.of(RedisAttempt.class);
    /** The longest lease of a place in the queue: a stopped waiter holds up others for this long at most. */
    static final Duration QUEUE_LEASE_MAX = QueuePlace.MAX_LEASE;

    private final RedisLockBackend backend;
    private final AcquireSpec spec;
    private final String ownerId;
    private final long leaseMs;
    /** This waiter's place in the queue: taken at the first wait, carried (renewed) by every try after it, left on close. */
    private final QueuePlace place;
    /** The jittered poll between tries when no notice comes. */
    private final Backoff poll;

    private volatile RedisWakeups.Watch watch;
    private boolean granted;
    private boolean uncertain;
    private long versionAtTry;
    private long retryNanos = Long.MAX_VALUE;
    private List<HolderInfo> blockers = List.of();
    /** In this space's registry of queued writers and permit waiters (see RedisLockBackend#handed). */
    private boolean registered;
    /** A grant a release of this space handed over (0: none), and the ticker reading by which it began. */
    private volatile long handedToken;

    private volatile long handedStartedBy;

    RedisAttempt(RedisLockBackend backend, AcquireSpec spec) {
        this.backend = backend;
        this.spec = spec;
        this.ownerId = spec.owner().id();
        this.leaseMs = Math.max(1, spec.lease().toMillis());
        this.place = new QueuePlace(Duration.ofMillis(leaseMs), backend.ticker, new QueuePlace.Keeper() {
            @Override
            public boolean take(Duration lease) {
                return true; // the next try queues this waiter, in the same script as the try
            }

            @Override
            public void giveUp() {
                backend.store.leave(spec.name(), ownerId);
            }
        });
        this.poll = Backoff.fixed(Duration.ofNanos(backend.pollNanos));
    }

    String ownerId() {
        return ownerId;
    }

    long leaseMs() {
        return leaseMs;
    }

    /** From a release of this space: the server has made {@code token} this attempt's grant (docs/redis.md, "Hand-off"). */
    void handOver(long token, long startedBy) {
        handedStartedBy = startedBy;
        handedToken = token;
        RedisWakeups.Watch w = watch;
        if (w != null) {
            w.poke();
        }
    }

    /** From now on this attempt keeps a place in the queue; a writer's or a permit's place makes it a candidate for hand-offs. */
    private void queue() {
        place.keep();
        if (!registered && writerOrPermit()) {
            registered = true;
            backend.queuedForHandOff(spec.name(), ownerId, this);
        }
    }

    /**
     * A writer of a plain lock, or one permit of a semaphore (whatever the mode: a permit is
     * exclusive), not a reader: only such an attempt barges, and only such a waiter is handed the
     * lock or a freed permit by a release of its space. Readers go in together with the readers
     * queued with them, woken by a notice.
     */
    private boolean writerOrPermit() {
        return spec.limit() > 0 || spec.mode() == Mode.EXCLUSIVE;
    }

    private void unregister() {
        if (registered) {
            registered = false;
            backend.notQueuedForHandOff(spec.name(), ownerId);
        }
    }

    @Override
    public Optional<Grant> tryAcquire() {
        long handed = handedToken;
        if (handed != 0) {
            // Handed over by a release of this space: held on the server already, no script needed.
            granted = true;
            unregister();
            backend.barging.inTurn(spec.name());
            long age = backend.ticker.read() - handedStartedBy; // measured after the core's try began: on the safe side
            return Optional.of(new RedisGrant(backend, spec, handed, backend.clock.instant(), Math.max(0, age)));
        }
        if (watch == null && spec.waits()) {
            // Another waiter of this process keeps the lock's channel subscribed: this attempt can
            // queue at its first try, as it would at its second, and save the unqueued try.
            watch = backend.wakeups.watchIfSubscribed(backend.store.keys().channel(spec.name()), ownerId);
            if (watch != null) {
                queue();
            }
        }
        versionAtTry = watch != null ? watch.version() : 0;
        String mark = writerOrPermit() ? backend.barging.mark(spec.name()) : null;
        RedisLockStore.Acquired r;
        try {
            r = backend.store.acquire(
                    spec.name(),
                    spec.mode(),
                    spec.limit(),
                    ownerId,
                    leaseMs,
                    place.held(),
                    place.lease().toMillis(),
                    mark);
        } catch (LockBackendException e) {
            uncertain = e.isTransient();
            throw e;
        }
        uncertain = false;
        if (r.granted()) {
            granted = true;
            place.granted();
            unregister();
            if (r.passed()) {
                backend.barging.barge(spec.name(), mark);
            } else if (writerOrPermit()) {
                backend.barging.inTurn(spec.name());
            }
            return Optional.of(new RedisGrant(backend, spec, r.token(), backend.clock.instant()));
        }
        if (place.held()) {
            place.kept(true); // the script renewed the place
        }
        blockers = backend.holders(r.blockers());
        retryNanos = TimeUnit.MILLISECONDS.toNanos(r.retryMs() + 1);
        return Optional.empty();
    }

    @Override
    public void await(long nanos) throws InterruptedException {
        if (watch == null) {
            watch = backend.wakeups.watch(backend.store.keys().channel(spec.name()), ownerId);
            queue();
            watch.awaitSubscribed(Math.min(nanos, backend.timeoutNanos));
            checkInterrupt();
            return;
        }
        long slice = Math.min(nanos, poll.nextNanos());
        slice = Math.min(slice, Math.max(TimeUnit.MILLISECONDS.toNanos(1), retryNanos));
        slice = Math.min(slice, place.nanosUntilDue());
        watch.awaitChange(versionAtTry, slice);
        checkInterrupt();
    }

    private void checkInterrupt() throws InterruptedException {
        if (Thread.interrupted()) {
            throw backend.failures.interruptedWaiting(spec.name());
        }
    }

    @Override
    public List<HolderInfo> blockers() {
        return blockers;
    }

    @Override
    public void close() {
        // First out of the registry, then the leave script: a release that handed this attempt the
        // lock before the leave has its grant dropped by the leave (leave.lua).
        unregister();
        if (watch != null) {
            watch.close();
        }
        if (granted) {
            return;
        }
        try {
            if (uncertain) {
                // The last try got no answer: it may have been granted, or queued us. Nobody else can hold this owner's
                // grant.
                backend.store.releaseAny(spec.name(), ownerId);
                place.kept(true);
            }
            place.close();
        } catch (LockBackendException e) {
            if (e.isTransient()) {
                // No answer: the place (and a grant made unseen) would keep everyone out with nobody to use it.
                backend.leftovers.leaveLater(spec.name(), ownerId);
            }
            log.debug(
                    "{} - '{}': cleaning up an attempt failed ({}): {}",
                    backend.description(),
                    spec.name(),
                    e.isTransient() ? "sent again once the server answers" : "its place expires by itself",
                    e.getMessage());
        }
    }
}
