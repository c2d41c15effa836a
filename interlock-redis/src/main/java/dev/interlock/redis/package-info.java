/**
 * The {@code redis:} backend: locks as keys in Redis, each operation one Lua script, leases on the
 * server's clock, fencing tokens that never go back, and release notices over pub/sub. Opened from
 * a {@code redis://} or {@code rediss://} URI by {@link dev.interlock.Interlock#open(String)}, or on an
 * application's own Jedis client by {@link dev.interlock.redis.RedisLocks}. See docs/redis.md.
 *
 * <p>Layers: {@code RedisLockStore} (the scripts), {@code RedisWakeups} (the subscriber connection) and
 * {@code RedisKeys} (the key layout) know nothing of the backend SPI; {@code RedisBackendProvider},
 * {@code RedisLockBackend}, {@code RedisAttempt} and {@code RedisGrant} adapt them to it.
 */
package dev.interlock.redis;
