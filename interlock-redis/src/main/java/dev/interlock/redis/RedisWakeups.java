package dev.interlock.redis;

import dev.interlock.spi.support.Backoff;
import dev.interlock.spi.support.ChangeSignal;
import dev.interlock.spi.support.Log;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;

/**
 * Release notices for the waiters of one lock space, over one subscriber connection shared by all
 * of them (started at the first wait). Each lock has its own channel, subscribed while someone in
 * this space waits for it; the release and leave scripts publish on it when the lock has queued
 * waiters. A notice names the owner id of the one waiter whose turn it is, and wakes only that
 * waiter's {@link Watch} (if it waits in this space; a notice naming a waiter of another space
 * wakes no one here). {@code *} (and the {@code 1} of versions before targeted notices) wakes
 * every waiter of the lock. Waking only the next in line spares the others a try each that could only fail: with
 * {@code n} waiters, a release used to cost {@code n} tries instead of one.
 *
 * <p>A waiter reads {@link Watch#version()} before its try and then waits for the version to
 * change ({@link Watch#awaitChange}). Messages can be missed (the connection drops, the server
 * restarts): when the subscriber connection is lost, every version is bumped so that all waiters
 * look again, and waiters never wait longer than their jittered poll interval anyway, so a missed
 * message costs latency, never liveness. A waiter named by a notice that has gone (crashed, timed
 * out without leaving) is passed over once its place in the queue runs out, which every other
 * waiter's wait is bounded by.
 */
final class RedisWakeups implements AutoCloseable {
    private static final Log log = Log.of(RedisWakeups.class);
    /** The mean wait before the subscriber connects again, doubling after each failure up to {@link #MAX_RECONNECT}. */
    private static final Duration FIRST_RECONNECT = Duration.ofMillis(50);

    private static final Duration MAX_RECONNECT = Duration.ofSeconds(2);

    private final UnifiedJedis client;
    private final String description;
    /** A channel nobody publishes on: keeps the connection subscribed while no lock is waited for. */
    private final String control;

    private final Object lock = new Object();
    /** Channels waited for, by name; guarded by {@link #lock}. */
    private final Map<String, Channel> channels = new HashMap<>();
    /** The live subscription, once its control channel is confirmed; guarded by {@link #lock}. */
    private Subscriber ready;

    private Thread thread;
    private volatile boolean closed;

    RedisWakeups(UnifiedJedis client, String prefix, String description) {
        this(client, null, prefix, description);
    }

    /**
     * @param dedicated opens a connection of the subscriber's own, closed when a subscription ends
     *     (null: borrow one from {@code client}'s pool, as for an application's injected client)
     */
    RedisWakeups(UnifiedJedis client, Supplier<Jedis> dedicated, String prefix, String description) {
        this.client = client;
        this.dedicated = dedicated;
        this.description = description;
        this.control = prefix + "interlock-control:" + UUID.randomUUID();
    }

    /** A connection of the subscriber's own, if the space made its client itself. */
    private final Supplier<Jedis> dedicated;

    /** True if the subscriber has a connection of its own, never one lent back to a pool. */
    boolean ownConnection() {
        return dedicated != null;
    }

    /** Starts listening on {@code channel} for notices to {@code ownerId} (or to all); close the watch to stop. */
    Watch watch(String channel, String ownerId) {
        return watch(channel, ownerId, null);
    }

    /**
     * A watch of {@code channel} for notices to {@code ownerId}, only if the channel is subscribed
     * already (another waiter of this process watches it, and the server has confirmed it);
     * otherwise null, and nothing is sent. A try made after this returns a watch cannot miss the
     * notice of a release that finds it queued.
     */
    Watch watchIfSubscribed(String channel, String ownerId) {
        synchronized (lock) {
            Channel c = channels.get(channel);
            if (c == null) {
                return null;
            }
            if (!c.subscribed) {
                return null;
            }
            return watch(channel, ownerId, null);
        }
    }

    /**
     * Starts listening on {@code channel} and hands every message on it to {@code listener} (on the
     * subscriber's thread; it must not block), e.g. a process's loss channel; close to stop. The
     * channel stays subscribed after its last watch closes, for as long as the subscriber runs:
     * one holder after another (a lock taken and given back in a loop) would otherwise send a
     * SUBSCRIBE and an UNSUBSCRIBE per cycle.
     */
    Watch listen(String channel, Consumer<String> listener) {
        return watch(channel, "", Objects.requireNonNull(listener, "listener"));
    }

    private Watch watch(String channel, String ownerId, Consumer<String> listener) {
        synchronized (lock) {
            Channel c = channels.get(channel);
            boolean created = c == null;
            if (created) {
                c = new Channel(channel);
                channels.put(channel, c);
            }
            c.kept |= listener != null;
            Watch w = new Watch(c, ownerId, listener);
            c.watches.add(w);
            // A channel in the map is subscribed already, or will be when the connection is back
            // (every channel of the map is subscribed then): a kept channel's next watch sends
            // nothing, or a lock taken and given back in a loop would SUBSCRIBE at every cycle.
            if (created && ready != null) {
                subscribes.incrementAndGet();
                send(() -> ready.subscribe(channel));
            }
            if (thread == null && !closed) {
                thread = new Thread(this::loop, "interlock-redis-wakeups");
                thread.setDaemon(true);
                thread.start();
            }
            return w;
        }
    }

    /** True for a notice meant for every waiter: {@code *}, or the {@code 1} that versions before targeted notices sent. */
    static boolean wakesAll(String message) {
        return message.equals("*") || message.equals("1");
    }

    /** One waiter's view of a channel. */
    final class Watch implements AutoCloseable {
        private final Channel channel;
        private final String ownerId;
        /** Given every message of the channel, if set (a listening watch, not a waiter's). */
        private final Consumer<String> listener;
        /** Bumped by every notice to this watch's owner. */
        private final ChangeSignal changes = new ChangeSignal();
        /** Guarded by {@link RedisWakeups#lock}. */
        private boolean closedWatch;

        private Watch(Channel channel, String ownerId, Consumer<String> listener) {
            this.channel = channel;
            this.ownerId = ownerId;
            this.listener = listener;
        }

        long version() {
            return changes.version();
        }

        private void bump() {
            changes.signal();
        }

        /** Ends a wait of this watch's owner as a notice would (a lock handed to it in this process). */
        void poke() {
            bump();
        }

        /** Waits until the server has confirmed the subscription, at most {@code nanos}; true if it has. */
        boolean awaitSubscribed(long nanos) throws InterruptedException {
            long end = System.nanoTime() + nanos;
            while (true) {
                long seen = channel.confirmations.version();
                if (channel.subscribed) {
                    return true;
                }
                long left = end - System.nanoTime();
                if (left <= 0 || !channel.confirmations.awaitChange(seen, left)) {
                    return channel.subscribed;
                }
            }
        }

        /** Waits until the version differs from {@code seen}, at most {@code nanos}. */
        void awaitChange(long seen, long nanos) throws InterruptedException {
            changes.awaitChange(seen, nanos);
        }

        @Override
        public void close() {
            synchronized (lock) {
                if (closedWatch) {
                    return;
                }
                closedWatch = true;
                channel.watches.remove(this);
                if (channel.watches.isEmpty() && !channel.kept && channels.get(channel.name) == channel) {
                    channels.remove(channel.name);
                    if (ready != null) {
                        send(() -> ready.unsubscribe(channel.name));
                    }
                }
            }
        }
    }

    /** SUBSCRIBE commands sent for single channels by {@link #watch}; for tests. */
    final AtomicLong subscribes = new AtomicLong();

    /** True if {@code channel} is subscribed, as the server confirmed; for tests. */
    boolean subscribed(String channel) {
        synchronized (lock) {
            Channel c = channels.get(channel);
            if (c == null) {
                return false;
            }
            return c.subscribed;
        }
    }

    private static final class Channel {
        final String name;
        /** The open watches; guarded by {@link RedisWakeups#lock}. */
        final List<Watch> watches = new ArrayList<>(2);
        /** Subscribed even without watches (a listened channel); guarded by {@link RedisWakeups#lock}. */
        boolean kept;
        /** Confirmed by the server; set under {@link RedisWakeups#lock}, read without it. */
        volatile boolean subscribed;
        /** Signalled when the server confirms the subscription. */
        final ChangeSignal confirmations = new ChangeSignal();

        Channel(String name) {
            this.name = name;
        }

        void unsubscribed() {
            subscribed = false;
        }
    }

    private final class Subscriber extends JedisPubSub {
        @Override
        public void onSubscribe(String channel, int count) {
            synchronized (lock) {
                if (channel.equals(control)) {
                    // A new connection: listen on every channel waited for now; later ones are sent by watch().
                    ready = this;
                    if (!channels.isEmpty()) {
                        String[] names = channels.keySet().toArray(new String[0]);
                        send(() -> subscribe(names));
                    }
                    return;
                }
                Channel c = channels.get(channel);
                if (c != null) {
                    c.subscribed = true;
                    c.confirmations.signal();
                }
            }
        }

        @Override
        public void onMessage(String channel, String message) {
            deliver(channel, message);
        }
    }

    /**
     * Wakes the watches of {@code channel} that {@code message} names: from the subscriber, and
     * straight from a release or leave of this space, which saves a waiter of this space the trip
     * through the server (the notice that then also arrives finds it gone, or costs it one try).
     */
    void deliver(String channel, String message) {
        List<Watch> wake = new ArrayList<>(1);
        List<Watch> listeners = new ArrayList<>(0);
        synchronized (lock) {
            Channel c = channels.get(channel);
            if (c == null) {
                return;
            }
            boolean all = wakesAll(message);
            for (Watch w : c.watches) {
                if (w.listener != null) {
                    listeners.add(w);
                } else if (all || w.ownerId.equals(message)) {
                    wake.add(w);
                }
            }
        }
        for (Watch w : wake) {
            w.bump();
        }
        for (Watch w : listeners) {
            try {
                w.listener.accept(message);
            } catch (RuntimeException e) {
                log.warn("{} - a message on {} could not be handled: {}", description, channel, e.getMessage());
            }
        }
    }

    /** Sends a (un)subscription; a failure means the connection is going, which the loop handles. */
    private void send(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            log.debug("{} - pub/sub command failed: {}", description, e.getMessage());
        }
    }

    private void loop() {
        Backoff backoff = Backoff.exponential(FIRST_RECONNECT, MAX_RECONNECT);
        while (!closed) {
            Subscriber s = new Subscriber();
            long started = System.nanoTime();
            try {
                if (dedicated != null) {
                    // Its own connection, closed afterwards: a reply to a late (un)subscription can
                    // never reach a pooled connection that a lock operation uses next.
                    try (Jedis j = dedicated.get()) {
                        j.subscribe(s, control); // blocks until unsubscribed or the connection fails
                    }
                } else {
                    client.subscribe(s, control);
                }
            } catch (RuntimeException e) {
                if (!closed) {
                    log.debug("{} - subscriber connection lost: {}", description, e.getMessage());
                }
            }
            List<Watch> all = new ArrayList<>();
            Channel[] chans;
            synchronized (lock) {
                if (ready == s) {
                    ready = null;
                }
                chans = channels.values().toArray(new Channel[0]);
                for (Channel c : chans) {
                    all.addAll(c.watches);
                }
            }
            // Messages may have been missed: everyone looks again (and polls until resubscribed).
            for (Channel c : chans) {
                c.unsubscribed();
            }
            for (Watch w : all) {
                w.bump();
            }
            if (closed) {
                break;
            }
            if (System.nanoTime() - started > TimeUnit.SECONDS.toNanos(10)) {
                backoff.reset();
            }
            try {
                TimeUnit.NANOSECONDS.sleep(backoff.nextNanos());
            } catch (InterruptedException e) {
                if (closed) {
                    break;
                }
            }
        }
    }

    @Override
    public void close() {
        Thread t;
        synchronized (lock) {
            closed = true;
            if (ready != null) {
                Subscriber s = ready;
                send(s::unsubscribe);
            }
            t = thread;
        }
        if (t != null) {
            t.interrupt();
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
