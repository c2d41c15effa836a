package dev.interlock.internal;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.LockMetrics;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Ticker;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.PacedTimer;
import dev.interlock.spi.support.Secrets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** Internal API: the one {@link LockSpace} implementation, over any {@link LockBackend}. */
public final class DefaultLockSpace implements LockSpace {
    private static final Log log = Log.of(DefaultLockSpace.class);
    /** How often kernel locks are checked for a removed or replaced lock file. */
    static final Duration KERNEL_LOCK_CHECK = Duration.ofMillis(Long.getLong("interlock.checkIntervalMs", 10_000));

    /** Threads of the default executor: at most this many backend calls of one space at once. */
    static final int MAX_BACKEND_THREADS = 4;
    /** How long close() waits for backend calls in flight (a release after a loss) to finish. */
    static final int CLOSE_WAIT_SECONDS = 10;

    final LockBackend backend;
    /** How the backend's grants stay held, read once ({@link LockBackend#leaseKind()}). */
    final LeaseKind leaseKind;
    /** What messages and {@link #uri()} show: the backend's description, passwords masked. */
    final String description;

    final Set<Capability> capabilities;
    final Ticker ticker;
    final Clock clock;
    final Duration defaultLease;
    /** Told of acquisitions, releases, renew failures and losses; never {@code null}. */
    final LockMetrics metrics;
    /** False for {@link LockMetrics#NONE}: then no clock is read and no call made for metrics. */
    final boolean metered;
    /** The URI scheme, the {@code backend} of metrics. */
    final String scheme;

    private final ScheduledExecutorService givenScheduler;
    private final Executor givenExecutor;
    private final ThreadFactory threadFactory;
    private volatile ScheduledExecutorService ownScheduler;
    private volatile ThreadPoolExecutor ownExecutor;
    private volatile ThreadPoolExecutor ownNotifier;
    private final Set<DefaultLease> open = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean sweeping = new AtomicBoolean();

    public DefaultLockSpace(
            LockBackend backend,
            Ticker ticker,
            Clock clock,
            ScheduledExecutorService scheduler,
            Duration defaultLease) {
        this(backend, Secrets.mask(backend.description()), ticker, clock, scheduler, null, null, defaultLease);
    }

    /**
     * @param scheduler times renewals and loss points and never runs a backend call (null: one
     *     daemon thread of this space)
     * @param executor runs backend calls (renew, release, checks) and loss listeners (null: a pool
     *     of up to {@value #MAX_BACKEND_THREADS} threads for calls and a separate one for listeners,
     *     so that calls hung on an unreachable backend never delay a loss notice)
     * @param threadFactory makes the threads of this space (null: daemon threads named interlock-*)
     */
    public DefaultLockSpace(
            LockBackend backend,
            String description,
            Ticker ticker,
            Clock clock,
            ScheduledExecutorService scheduler,
            Executor executor,
            ThreadFactory threadFactory,
            Duration defaultLease) {
        this(backend, description, ticker, clock, scheduler, executor, threadFactory, defaultLease, LockMetrics.NONE);
    }

    /** The same, with {@code metrics} told of what happens (see {@link LockMetrics}). */
    public DefaultLockSpace(
            LockBackend backend,
            String description,
            Ticker ticker,
            Clock clock,
            ScheduledExecutorService scheduler,
            Executor executor,
            ThreadFactory threadFactory,
            Duration defaultLease,
            LockMetrics metrics) {
        this.metrics = Objects.requireNonNull(metrics, "metrics");
        this.metered = metrics != LockMetrics.NONE;
        this.backend = backend;
        this.leaseKind = backend.leaseKind();
        this.description = Secrets.mask(description);
        int colon = this.description.indexOf(':');
        this.scheme = colon > 0 ? this.description.substring(0, colon).toLowerCase(Locale.ROOT) : this.description;
        Set<Capability> caps = backend.capabilities();
        this.capabilities = caps.isEmpty() ? Set.of() : Collections.unmodifiableSet(EnumSet.copyOf(caps));
        this.ticker = ticker;
        this.clock = clock;
        this.givenScheduler = scheduler;
        this.givenExecutor = executor;
        this.threadFactory = threadFactory;
        this.defaultLease = defaultLease;
    }

    /**
     * How {@code grant} stays held: as the backend says, unless a backend written before
     * {@link LockBackend#leaseKind()} answers for the grant itself (the deprecated
     * {@link Grant#leaseKind()}).
     */
    @SuppressWarnings("deprecation")
    LeaseKind leaseKind(Grant grant) {
        LeaseKind own = grant.leaseKind();
        return own != null ? own : leaseKind;
    }

    /** The backend, for tests and tools in this project. */
    public LockBackend backend() {
        return backend;
    }

    @Override
    public String uri() {
        return description;
    }

    @Override
    public Set<Capability> capabilities() {
        return capabilities;
    }

    @Override
    public LockRequest lock(String name) {
        checkOpen();
        return new DefaultLockRequest(this, LockNames.validate(name));
    }

    @Override
    public LockInfo status(String name) {
        checkOpen();
        return backend.inspect(LockNames.validate(name));
    }

    @Override
    public List<LockInfo> list() {
        checkOpen();
        return backend.list();
    }

    @Override
    public boolean breakLock(String name, String ownerId) {
        checkOpen();
        String n = LockNames.validate(name);
        if (!capabilities.contains(Capability.BREAK)) {
            throw new UnsupportedOperationException(description + " - cannot break " + LockNames.quote(n)
                    + ": its locks free only when their holder releases them or exits");
        }
        return backend.breakLock(n, Objects.requireNonNull(ownerId, "ownerId"));
    }

    /**
     * The threads of this space: the given factory's, else daemon threads named {@code name}.
     * A class rather than lambdas (here and at the other few spots a command-line {@code run}
     * passes through): on JDK 17, without an AOT cache, each lambda is linked through
     * java.lang.invoke at its first use, about a tenth of the command's main-thread CPU in all.
     */
    private final class Threads implements ThreadFactory {
        private final String name;

        Threads(String name) {
            this.name = name;
        }

        @Override
        public Thread newThread(Runnable r) {
            if (threadFactory != null) {
                return threadFactory.newThread(r);
            }
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        }
    }

    ScheduledExecutorService scheduler() {
        if (givenScheduler != null) {
            return givenScheduler;
        }
        ScheduledExecutorService s = ownScheduler;
        if (s == null) {
            synchronized (this) {
                s = ownScheduler;
                if (s == null) {
                    // Paced: scheduling a lease's renewal and loss check wakes no thread (PacedTimer).
                    s = ownScheduler = PacedTimer.create(new Threads("interlock-timer"));
                }
            }
        }
        return s;
    }

    private Executor executor() {
        if (givenExecutor != null) {
            return givenExecutor;
        }
        ThreadPoolExecutor e = ownExecutor;
        if (e == null) {
            synchronized (this) {
                e = ownExecutor;
                if (e == null) {
                    e = ownExecutor = pool(MAX_BACKEND_THREADS, "interlock-backend");
                }
            }
        }
        return e;
    }

    private Executor notifier() {
        if (givenExecutor != null) {
            return givenExecutor;
        }
        ThreadPoolExecutor e = ownNotifier;
        if (e == null) {
            synchronized (this) {
                e = ownNotifier;
                if (e == null) {
                    e = ownNotifier = pool(2, "interlock-notify");
                }
            }
        }
        return e;
    }

    /** Up to {@code threads} threads, started on demand and ended after 30s idle; an unbounded queue. */
    private ThreadPoolExecutor pool(int threads, String name) {
        ThreadPoolExecutor e = new ThreadPoolExecutor(
                threads, threads, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), new Threads(name));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /** Runs {@code task} on the timer after {@code delayNanos}; null if the space is closing. */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return scheduler().schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs a backend call on the executor; false if the space is closing. */
    boolean execute(Runnable task) {
        try {
            executor().execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Runs listeners on the notifier; false if the space is closing. */
    boolean notify(Runnable task) {
        try {
            notifier().execute(task);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Starts (once) the periodic check of all open kernel-lock leases. */
    void ensureKernelSweep() {
        if (sweeping.get() || !sweeping.compareAndSet(false, true)) {
            return;
        }
        long period = KERNEL_LOCK_CHECK.toNanos();
        try {
            scheduler()
                    .scheduleWithFixedDelay(
                            new Runnable() {
                                @Override
                                public void run() {
                                    sweep();
                                }
                            },
                            period,
                            period,
                            TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void sweep() {
        for (DefaultLease l : open) {
            try {
                l.watchdog();
            } catch (RuntimeException e) {
                log.error("{} - checking '{}' failed", description, l.name(), e);
            }
        }
    }

    /**
     * Releases kept past close() by hold-at-least, each run once: by its timer or, if its value is
     * true, by the space's close() if that comes first.
     */
    private final Map<Runnable, Boolean> heldOn = new ConcurrentHashMap<>();

    /**
     * Runs {@code release} (a backend call) after {@code delayNanos}. If the space closes sooner,
     * it runs then when {@code atSpaceClose} (a lock that does not expire cannot outlive the space
     * that holds it), and is dropped otherwise (a lease that was renewed to end at that time is
     * left to expire, so the lock stays held even after this process exits).
     */
    void releaseLater(Runnable release, long delayNanos, boolean atSpaceClose) {
        Runnable once = new Runnable() {
            @Override
            public void run() {
                if (heldOn.remove(this) != null) {
                    release.run();
                }
            }
        };
        heldOn.put(once, atSpaceClose);
        if (schedule(
                        () -> {
                            if (!execute(once)) {
                                once.run();
                            }
                        },
                        delayNanos)
                == null) {
            if (atSpaceClose) {
                once.run();
            } else {
                heldOn.remove(once);
            }
        }
    }

    void opened(DefaultLease lease) {
        open.add(lease);
    }

    void ended(DefaultLease lease) {
        open.remove(lease);
    }

    /** Number of leases neither closed nor lost; for tests. */
    public int openLeases() {
        return open.size();
    }

    // Metrics: called only when metered; a failing implementation never fails a lock operation.

    void acquiredMetric(String name, Mode mode, long waitNanos, boolean contended) {
        try {
            metrics.acquired(scheme, name, mode, waitNanos, contended);
        } catch (RuntimeException e) {
            metricsFailed(e);
        }
    }

    void timedOutMetric(String name, Mode mode, long waitNanos, boolean tryOnly) {
        try {
            metrics.timedOut(scheme, name, mode, waitNanos, tryOnly);
        } catch (RuntimeException e) {
            metricsFailed(e);
        }
    }

    void releasedMetric(String name, Mode mode, long holdNanos) {
        try {
            metrics.released(scheme, name, mode, holdNanos);
        } catch (RuntimeException e) {
            metricsFailed(e);
        }
    }

    void renewFailedMetric(String name, Mode mode, RuntimeException cause) {
        try {
            metrics.renewFailed(scheme, name, mode, cause);
        } catch (RuntimeException e) {
            metricsFailed(e);
        }
    }

    void lostMetric(String name, Mode mode, long holdNanos) {
        try {
            metrics.lost(scheme, name, mode, holdNanos);
        } catch (RuntimeException e) {
            metricsFailed(e);
        }
    }

    private void metricsFailed(RuntimeException e) {
        log.warn("{} - the metrics of this lock space failed (ignored)", description, e);
    }

    void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException(description + " - the lock space is closed");
        }
    }

    /**
     * Who blocked an attempt, for the timeout message: its holders and the queued waiters it gave
     * way to ({@link HolderInfo#waiting()}); a lock can be free and still not granted because a
     * waiter queued earlier goes first.
     */
    /**
     * Who stands in the way, for messages: "held EX by ...; a queued waiter goes first: ...", or
     * "free, but ..." when only queued waiters do, or "holder unknown".
     */
    public static String describe(List<HolderInfo> blockers) {
        List<String> held = new ArrayList<>();
        List<String> queued = new ArrayList<>();
        for (HolderInfo h : blockers) {
            (h.waiting() ? queued : held).add(h.describe());
        }
        if (held.isEmpty() && queued.isEmpty()) {
            return "holder unknown";
        }
        String waiters =
                queued.size() == 1 ? "a queued waiter goes first: " : queued.size() + " queued waiters go first: ";
        if (held.isEmpty()) {
            return "free, but " + waiters + String.join("; ", queued);
        }
        return "held " + String.join("; ", held) + (queued.isEmpty() ? "" : "; " + waiters + String.join("; ", queued));
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (DefaultLease l : List.copyOf(open)) {
            try {
                l.close();
            } catch (RuntimeException e) {
                log.warn("{} - releasing '{}' on close failed: {}", description, l.name(), e.getMessage());
            }
        }
        for (Map.Entry<Runnable, Boolean> kept : List.copyOf(heldOn.entrySet())) {
            if (kept.getValue()) {
                kept.getKey().run(); // a lock that does not expire cannot outlive the space that holds it
            } else {
                heldOn.remove(kept.getKey()); // a lease: it ends by itself at its hold-at-least time
            }
        }
        ScheduledExecutorService s = ownScheduler;
        if (s != null) {
            s.shutdownNow();
        }
        ThreadPoolExecutor e = ownExecutor;
        if (e != null) {
            e.shutdown(); // releases queued after a loss still run; nothing new is accepted
            try {
                if (!e.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
                    log.warn(
                            "{} - backend calls still running {}s after close; leaving them",
                            description,
                            CLOSE_WAIT_SECONDS);
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        }
        ThreadPoolExecutor n = ownNotifier;
        if (n != null) {
            n.shutdown();
        }
        backend.close();
    }
}
