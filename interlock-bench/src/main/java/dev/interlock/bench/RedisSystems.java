package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.params.SetParams;

/**
 * The lock systems of the redis: comparison, on one Redis server: Interlock {@code redis:},
 * Redisson's {@code RLock}, ShedLock's Redis provider and the raw {@code SET NX PX} +
 * compare-and-delete floor.
 */
final class RedisSystems {
    static final Duration LEASE = Duration.ofSeconds(30);
    /** Connections of the Jedis pools (Interlock's URI default, and the floor's and ShedLock's clients). */
    static final int POOL = 16;

    static final String COMPARE_AND_DELETE =
            "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

    private RedisSystems() {}

    static LockSystem open(String kind, String uri) {
        switch (kind) {
            case "interlock":
                return interlock(uri, "", "Interlock redis:");
            case "interlock-fair":
                return interlock(uri, "&barge=0", "Interlock redis: barge=0 (strictly in turn)");
            case "redisson":
                return redisson(uri);
            case "shedlock":
                return shedlock(uri, 0);
            case "shedlock-100ms":
                return shedlock(uri, 100);
            case "floor":
                return floor(uri, 0);
            case "interlock-permit4":
                return RedisSemaphoreSystems.interlock(uri, 4);
            case "redisson-permit4":
                return RedisSemaphoreSystems.redisson(uri, 4);
            default:
                throw new IllegalArgumentException("unknown redis system '" + kind
                        + "'; known: interlock, interlock-fair, redisson, shedlock, shedlock-100ms, floor, interlock-permit4,"
                        + " redisson-permit4");
        }
    }

    static RedisClient jedis(String uri) {
        URI u = URI.create(uri);
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(POOL);
        pool.setMaxIdle(POOL);
        pool.setJmxEnabled(false);
        return RedisClient.builder()
                .hostAndPort(u.getHost(), u.getPort())
                .clientConfig(
                        DefaultJedisClientConfig.builder().timeoutMillis(2000).build())
                .poolConfig(pool)
                .build();
    }

    /** Interlock opened from its URI (its own Jedis pool of 16 connections, release notices by pub/sub). */
    static LockSystem interlock(String uri, String options, String label) {
        LockSpace locks = Interlock.open(uri + "/0?prefix=bench:" + options);
        return new LockSystem() {
            @Override
            public String label() {
                return label;
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    Lease lease;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        lease = locks.lock(name).lease(LEASE).acquire();
                    }

                    @Override
                    public void release() {
                        lease.close();
                    }
                };
            }

            @Override
            public void close() {
                locks.close();
            }
        };
    }

    /** Redisson's {@code RLock} with Redisson's defaults (watchdog renewal, pub/sub wake-ups). */
    static LockSystem redisson(String uri) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        RedissonClient client = Redisson.create(config);
        return new LockSystem() {
            @Override
            public String label() {
                return "Redisson RLock";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    RLock held;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        RLock l = client.getLock("redisson:" + name);
                        l.lockInterruptibly();
                        held = l;
                    }

                    @Override
                    public void release() {
                        held.unlock();
                    }
                };
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }

    /**
     * ShedLock's Redis provider. Its artifacts ({@code shedlock-provider-redis-jedis4},
     * {@code -lettuce}, {@code -spring}) are not served by the registry this build reaches, so this
     * is its protocol on shedlock-core's own {@link LockProvider} and {@link AbstractSimpleLock}
     * over the same Jedis client as the floor: lock {@code SET job-lock:default:NAME VALUE NX PX
     * lockAtMostFor} (the value: time, host and a random UUID), unlock a plain {@code DEL} (its
     * default; {@code safeUpdate} would compare-and-delete). ShedLock has no wait: the locker
     * tries again, at once or after {@code retryMillis}.
     */
    static LockSystem shedlock(String uri, long retryMillis) {
        RedisClient client = jedis(uri);
        ShedLockRedisProvider provider = new ShedLockRedisProvider(client);
        return ShedLockSystem.of("Redis", provider, LEASE, retryMillis, client::close);
    }

    /** See {@link #shedlock}. */
    static final class ShedLockRedisProvider implements LockProvider {
        private static final String HOST = host();
        private final RedisClient client;

        ShedLockRedisProvider(RedisClient client) {
            this.client = client;
        }

        private static String host() {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                return "unknown";
            }
        }

        @Override
        public Optional<SimpleLock> lock(LockConfiguration config) {
            String key = "job-lock:default:" + config.getName();
            String value = "ADDED:" + ClockProvider.now() + "@" + HOST + ":" + UUID.randomUUID();
            long ms = Duration.between(ClockProvider.now(), config.getLockAtMostUntil())
                    .toMillis();
            if (!"OK".equals(client.set(key, value, SetParams.setParams().nx().px(ms)))) {
                return Optional.empty();
            }
            return Optional.of(new AbstractSimpleLock(config) {
                @Override
                protected void doUnlock() {
                    long keep = Duration.between(ClockProvider.now(), lockConfiguration.getLockAtLeastUntil())
                            .toMillis();
                    if (keep <= 0) {
                        client.del(key);
                    } else {
                        client.set(key, value, SetParams.setParams().xx().px(keep));
                    }
                }
            });
        }
    }

    /**
     * The floor: {@code SET key owner NX PX lease} to take, a compare-and-delete script
     * ({@code EVALSHA}) to give back, on a Jedis pool; a unique owner per acquisition; no token,
     * no renewal, no wake-ups: a waiter tries again at once.
     */
    static LockSystem floor(String uri, long retryMillis) {
        RedisClient client = jedis(uri);
        String sha = client.scriptLoad(COMPARE_AND_DELETE);
        AtomicLong owners = new AtomicLong();
        String process = UUID.randomUUID().toString().substring(0, 8);
        SetParams nxpx = SetParams.setParams().nx().px(LEASE.toMillis());
        return new LockSystem() {
            @Override
            public String label() {
                return "raw floor (SET NX PX / compare-and-delete)";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    String key;
                    String owner;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        String k = "floor:" + name;
                        String o = process + ":" + owners.incrementAndGet();
                        while (!"OK".equals(client.set(k, o, nxpx))) {
                            LockSystem.pause(retryMillis);
                        }
                        key = k;
                        owner = o;
                    }

                    @Override
                    public void release() {
                        Object r = client.evalsha(sha, List.of(key), List.of(owner));
                        if (!(r instanceof Long) || (Long) r != 1L) {
                            throw new IllegalStateException("floor: lost " + key);
                        }
                    }
                };
            }

            @Override
            public void close() {
                client.close();
            }
        };
    }
}
