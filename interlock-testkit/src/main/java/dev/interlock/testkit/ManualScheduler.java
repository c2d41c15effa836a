package dev.interlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A scheduler on a {@link FakeTicker}: tasks run on the calling thread when {@link #advance}
 * moves time past them, in time order. Lets tests drive lease renewal without sleeping.
 */
public final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private final FakeTicker ticker;
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
    private final AtomicLong seq = new AtomicLong();
    private boolean shutdown;

    public ManualScheduler(FakeTicker ticker) {
        this.ticker = ticker;
    }

    /** Moves time forward by {@code d} in small steps, running every task that falls due. */
    public void advance(Duration d) {
        long end = ticker.read() + d.toNanos();
        while (true) {
            Task<?> next;
            synchronized (this) {
                next = queue.peek();
                if (next == null || next.at > end) {
                    break;
                }
                queue.poll();
            }
            if (next.at > ticker.read()) {
                ticker.advance(Duration.ofNanos(next.at - ticker.read()));
            }
            next.run();
        }
        if (end > ticker.read()) {
            ticker.advance(Duration.ofNanos(end - ticker.read()));
        }
    }

    /** Tasks waiting to run. */
    public synchronized int pending() {
        return (int) queue.stream().filter(t -> !t.cancelled).count();
    }

    private final class Task<V> implements ScheduledFuture<V>, Runnable {
        final long at;
        final long order = seq.incrementAndGet();
        final Callable<V> body;
        final long period; // 0: one-shot; >0: fixed delay
        volatile boolean cancelled;
        volatile boolean done;

        Task(long at, Callable<V> body, long period) {
            this.at = at;
            this.body = body;
            this.period = period;
        }

        @Override
        public void run() {
            if (cancelled) {
                return;
            }
            try {
                body.call();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            if (period > 0 && !cancelled) {
                synchronized (ManualScheduler.this) {
                    queue.add(new Task<>(ticker.read() + period, body, period));
                }
            } else {
                done = true;
            }
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(at - ticker.read(), TimeUnit.NANOSECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            Task<?> t = (Task<?>) o;
            return at != t.at ? Long.compare(at, t.at) : Long.compare(order, t.order);
        }

        @Override
        public boolean cancel(boolean mayInterrupt) {
            cancelled = true;
            return !done;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public V get() {
            throw new UnsupportedOperationException("ManualScheduler futures cannot be awaited");
        }

        @Override
        public V get(long timeout, TimeUnit unit) {
            throw new UnsupportedOperationException("ManualScheduler futures cannot be awaited");
        }
    }

    private synchronized <V> ScheduledFuture<V> add(long delayNanos, Callable<V> body, long period) {
        if (shutdown) {
            throw new RejectedExecutionException("shut down");
        }
        Task<V> t = new Task<>(ticker.read() + Math.max(0, delayNanos), body, period);
        queue.add(t);
        return t;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(
                unit.toNanos(delay),
                () -> {
                    command.run();
                    return null;
                },
                0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return add(unit.toNanos(delay), callable, 0);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return scheduleWithFixedDelay(command, initialDelay, period, unit);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(
                unit.toNanos(initialDelay),
                () -> {
                    command.run();
                    return null;
                },
                unit.toNanos(delay));
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public synchronized void shutdown() {
        shutdown = true;
    }

    @Override
    public synchronized List<Runnable> shutdownNow() {
        shutdown = true;
        List<Runnable> out = new ArrayList<>(queue);
        queue.clear();
        return out;
    }

    @Override
    public synchronized boolean isShutdown() {
        return shutdown;
    }

    @Override
    public synchronized boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }
}
