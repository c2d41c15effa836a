package dev.interlock.redis;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import dev.interlock.Ticker;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.support.Barging;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import redis.clients.jedis.UnifiedJedis;

/**
 * Opens a {@code redis:} lock space on a Jedis client the application already has (a
 * {@code RedisClient}, a {@code RedisClusterClient}, a sentinel client...), for setups a URI cannot
 * express: custom TLS, sentinel, cluster, credential providers.
 *
 * {@snippet :
 * RedisClient client = RedisClient.builder().hostAndPort("redis.internal", 6379).clientConfig(config).build();
 * try (LockSpace locks = RedisLocks.builder(client).prefix("billing:locks:").open()) {
 *     try (Lease lease = locks.acquire("nightly-report", Duration.ofMinutes(5))) {
 *         write(report, lease.token());
 *     }
 * }
 * }
 *
 * <p>The space borrows the client: closing the space does not close it. The client's own socket
 * timeout bounds every lock operation; keep it well under a fifth of the lease, so that a hung
 * server turns into a failed renewal (and a lost-lock notice) while the lease still holds. One
 * connection of the client's pool is taken for release notices while anyone waits.
 *
 * <p>On a cluster client every lock works (all its keys share one slot), but {@code list()} does not:
 * it scans one server.
 */
public final class RedisLocks {
    private RedisLocks() {}

    /** A lock space with the default prefix {@value RedisKeys#DEFAULT_PREFIX}. See {@link Builder#open()}. */
    public static LockSpace open(UnifiedJedis client) {
        return builder(client).open();
    }

    /** Starts configuring a lock space on {@code client}. */
    public static Builder builder(UnifiedJedis client) {
        return new Builder(client);
    }

    /** Options of a lock space on an injected client. Each setter may be called once. */
    public static final class Builder {
        private final UnifiedJedis client;
        private String prefix;
        private Duration poll;
        private Duration defaultLease;
        private String description;
        private Integer barge;

        private Builder(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
        }

        /** Key prefix (default {@value RedisKeys#DEFAULT_PREFIX}); must not contain braces. */
        public Builder prefix(String prefix) {
            requireUnset(this.prefix, "prefix");
            this.prefix = RedisKeys.checkPrefix(Objects.requireNonNull(prefix, "prefix"));
            return this;
        }

        /** Longest wait between a waiter's tries when no release notice arrives (default 1s, jittered by ±50%). */
        public Builder poll(Duration poll) {
            requireUnset(this.poll, "poll");
            if (poll.toMillis() < 1 || poll.toMinutes() > 10) {
                throw new IllegalArgumentException("poll must be between 1ms and 10m, was " + poll);
            }
            this.poll = poll;
            return this;
        }

        /**
         * How many times in a row a writer of this space may take back the lock the space has just
         * released, while nobody else has had it since, ahead of queued waiters (default
         * {@value Barging#DEFAULT}; 0: strictly in turn). See docs/redis.md, "Bounded barging".
         */
        public Builder barge(int times) {
            requireUnset(this.barge, "barge");
            this.barge = Barging.parse(Integer.toString(times), "");
            return this;
        }

        /** Lease of requests that set none (default 30s). */
        public Builder defaultLease(Duration lease) {
            requireUnset(this.defaultLease, "defaultLease");
            if (lease.toMillis() < 100) {
                throw new IllegalArgumentException("default lease must be at least 100ms, was " + lease);
            }
            this.defaultLease = lease;
            return this;
        }

        /**
         * How messages and {@link LockSpace#uri()} name this space (default {@code redis:client?prefix=P}).
         * It must not contain credentials.
         */
        public Builder description(String description) {
            requireUnset(this.description, "description");
            this.description = Objects.requireNonNull(description, "description");
            return this;
        }

        private static void requireUnset(Object current, String what) {
            if (current != null) {
                throw new IllegalStateException(what + " was already set to " + current);
            }
        }

        /**
         * Checks that the server answers and runs scripts, then opens the space.
         *
         * @throws LockBackendException if the server is unreachable or refuses (wrong password, no EVAL permission)
         */
        public LockSpace open() {
            return Interlock.builder(backend())
                    .defaultLease(defaultLease != null ? defaultLease : Duration.ofSeconds(30))
                    .open();
        }

        /**
         * The backend alone, for a space that needs more than this builder offers (metrics, an
         * executor): {@code Interlock.builder(RedisLocks.builder(client).backend()).metrics(m).open()}.
         * The space closes it; the client stays the application's. Checks the server as
         * {@link #open()} does; {@link #defaultLease} is then the space builder's to set.
         *
         * @throws LockBackendException if the server is unreachable or refuses (wrong password, no EVAL permission)
         */
        public LockBackend backend() {
            String p = prefix != null ? prefix : RedisKeys.DEFAULT_PREFIX;
            String desc = description != null ? description : "redis:client?prefix=" + p;
            RedisLockStore store = new RedisLockStore(client, new RedisKeys(p), desc, () -> {});
            store.ping();
            return new RedisLockBackend(
                    store,
                    new RedisWakeups(client, p, desc),
                    Ticker.system(),
                    Clock.systemUTC(),
                    poll != null ? poll : RedisLocation.DEFAULT_POLL,
                    RedisLocation.DEFAULT_TIMEOUT,
                    barge != null ? barge : Barging.DEFAULT,
                    () -> {});
        }
    }
}
