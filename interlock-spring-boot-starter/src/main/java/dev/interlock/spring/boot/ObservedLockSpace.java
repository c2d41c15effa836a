package dev.interlock.spring.boot;

import dev.interlock.Capability;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * A lock space whose acquisitions are Micrometer {@link Observation}s: one for each wait (from the
 * request to the grant, a busy try, a timeout or an interrupt) and one for each hold (from the grant
 * to the release or the loss). With a tracing bridge each becomes a span, a child of whatever
 * observation is current on the acquiring thread (the scheduled task, the HTTP request).
 *
 * <p>Key values: low cardinality {@code interlock.name} (bounded by {@link LockNameTags}),
 * {@code interlock.mode}, {@code interlock.backend}, {@code interlock.outcome} (wait:
 * {@code acquired}, {@code busy}, {@code timeout}, {@code interrupted}, {@code error}) and
 * {@code interlock.end} (hold: {@code released}, {@code lost}); high cardinality
 * {@code interlock.token} (the fencing token) and {@code interlock.lock} (the whole lock name).
 *
 * <p>Everything else goes straight to the wrapped space; closing this space closes it.
 */
final class ObservedLockSpace implements LockSpace {
    static final String WAIT = "interlock.lock.wait";
    static final String HOLD = "interlock.lock.hold";

    private final LockSpace space;
    private final ObservationRegistry registry;
    private final LockNameTags names;
    private final String backend;

    ObservedLockSpace(LockSpace space, ObservationRegistry registry, LockNameTags names) {
        this.space = space;
        this.registry = registry;
        this.names = names;
        String uri = space.uri();
        int colon = uri.indexOf(':');
        this.backend = colon <= 0 ? "unknown" : uri.substring(0, colon).toLowerCase(Locale.ROOT);
    }

    @Override
    public String uri() {
        return space.uri();
    }

    @Override
    public Set<Capability> capabilities() {
        return space.capabilities();
    }

    @Override
    public LockRequest lock(String name) {
        return new ObservedRequest(space.lock(name), name);
    }

    @Override
    public LockInfo status(String name) {
        return space.status(name);
    }

    @Override
    public List<LockInfo> list() {
        return space.list();
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        return space.breakLock(name, ownerId);
    }

    @Override
    public void close() {
        space.close();
    }

    @Override
    public String toString() {
        return "ObservedLockSpace[" + space + "]";
    }

    private Observation observation(String observationName, String contextualName, String name, Mode mode) {
        return Observation.createNotStarted(observationName, registry)
                .contextualName(contextualName)
                .lowCardinalityKeyValue("interlock.name", names.tag(name))
                .lowCardinalityKeyValue("interlock.mode", mode.name().toLowerCase(Locale.ROOT))
                .lowCardinalityKeyValue("interlock.backend", backend)
                .highCardinalityKeyValue("interlock.lock", name);
    }

    /** One acquisition's options, passed through; the terminal calls are observed. */
    private final class ObservedRequest implements LockRequest {
        private final LockRequest request;
        private final String name;
        private Mode mode = Mode.EXCLUSIVE;

        ObservedRequest(LockRequest request, String name) {
            this.request = request;
            this.name = name;
        }

        @Override
        public LockRequest mode(Mode mode) {
            request.mode(mode);
            this.mode = mode;
            return this;
        }

        @Override
        public LockRequest limit(int limit) {
            request.limit(limit);
            return this;
        }

        @Override
        public LockRequest lease(Duration lease) {
            request.lease(lease);
            return this;
        }

        @Override
        public LockRequest fixedLease() {
            request.fixedLease();
            return this;
        }

        @Override
        public LockRequest holdAtLeast(Duration duration) {
            request.holdAtLeast(duration);
            return this;
        }

        @Override
        public LockRequest onLost(Consumer<LockLostException> listener) {
            request.onLost(listener);
            return this;
        }

        @Override
        public Optional<Lease> tryAcquire() {
            Observation wait = observation(WAIT, "interlock wait", name, mode).start();
            try {
                Optional<Lease> lease = request.tryAcquire();
                wait.lowCardinalityKeyValue("interlock.outcome", lease.isPresent() ? "acquired" : "busy");
                return lease.map(l -> held(wait, l));
            } catch (RuntimeException e) {
                throw failed(wait, e);
            } finally {
                wait.stop();
            }
        }

        @Override
        public Lease acquire(Duration timeout) throws InterruptedException {
            return waitObserved(() -> request.acquire(timeout));
        }

        @Override
        public Lease acquire() throws InterruptedException {
            return waitObserved(request::acquire);
        }

        /** A waiting acquisition, observed from the request to the grant, timeout, interrupt or error. */
        private Lease waitObserved(Waiting waiting) throws InterruptedException {
            Observation wait = observation(WAIT, "interlock wait", name, mode).start();
            try {
                return held(wait, waiting.acquire());
            } catch (LockTimeoutException e) {
                wait.lowCardinalityKeyValue("interlock.outcome", "timeout");
                throw e;
            } catch (InterruptedException e) {
                wait.lowCardinalityKeyValue("interlock.outcome", "interrupted");
                throw e;
            } catch (RuntimeException e) {
                throw failed(wait, e);
            } finally {
                wait.stop();
            }
        }

        private RuntimeException failed(Observation wait, RuntimeException e) {
            wait.lowCardinalityKeyValue("interlock.outcome", "error");
            wait.error(e);
            return e;
        }

        /** Marks the wait acquired and starts the hold, which ends at the lease's close or loss. */
        private Lease held(Observation wait, Lease lease) {
            String token = Long.toString(lease.token());
            wait.lowCardinalityKeyValue("interlock.outcome", "acquired")
                    .highCardinalityKeyValue("interlock.token", token);
            Observation hold = observation(HOLD, "interlock hold", name, mode)
                    .highCardinalityKeyValue("interlock.token", token)
                    .start();
            return new ObservedLease(lease, hold);
        }
    }

    /** {@code acquire(timeout)} or {@code acquire()} of the wrapped request. */
    @FunctionalInterface
    private interface Waiting {
        Lease acquire() throws InterruptedException;
    }

    /** A lease whose hold observation stops once, at the first of close and loss. */
    private static final class ObservedLease implements Lease {
        private final Lease lease;
        private final Observation hold;
        private final AtomicBoolean ended = new AtomicBoolean();

        ObservedLease(Lease lease, Observation hold) {
            this.lease = lease;
            this.hold = hold;
            lease.onLost(e -> end("lost", e));
        }

        private void end(String how, Throwable error) {
            if (ended.compareAndSet(false, true)) {
                hold.lowCardinalityKeyValue("interlock.end", how);
                if (error != null) {
                    hold.error(error);
                }
                hold.stop();
            }
        }

        @Override
        public String name() {
            return lease.name();
        }

        @Override
        public Mode mode() {
            return lease.mode();
        }

        @Override
        public Owner owner() {
            return lease.owner();
        }

        @Override
        public long token() {
            return lease.token();
        }

        @Override
        public Instant acquiredAt() {
            return lease.acquiredAt();
        }

        @Override
        public Instant validUntil() {
            return lease.validUntil();
        }

        @Override
        public boolean isValid() {
            return lease.isValid();
        }

        @Override
        public void renew() {
            lease.renew();
        }

        @Override
        public void renew(Duration duration) {
            lease.renew(duration);
        }

        @Override
        public Lease onLost(Consumer<LockLostException> listener) {
            lease.onLost(listener);
            return this;
        }

        @Override
        public void close() {
            try {
                lease.close();
            } finally {
                end("released", null);
            }
        }

        @Override
        public String toString() {
            return lease.toString();
        }
    }
}
