package dev.interlock.redis;

import dev.interlock.LockBackendException;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import dev.interlock.spi.support.BackendFailures;
import java.util.Set;
import javax.net.ssl.SSLParameters;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Provides {@code redis://} and {@code rediss://} (TLS) lock spaces; see {@link RedisLocation}
 * for the URI and docs/redis.md for the rest. Opening connects and checks the server (it answers,
 * takes the credentials, runs scripts), so an unusable server is a {@link LockBackendException}
 * at once, not at the first lock.
 */
public final class RedisBackendProvider implements LockBackendProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    @Override
    public String description() {
        return "keys in Redis, with fencing tokens and server-side leases: " + RedisLocation.FORM;
    }

    @Override
    public LockBackend open(BackendConfig config) {
        RedisLocation loc = RedisLocation.parse(config.uri(), System::getenv);
        RedisClient client = client(loc);
        try {
            String description = loc.description();
            // The client gives up on an answer after the timeout: a request the server runs later must change nothing.
            RedisLockStore store = new RedisLockStore(
                    client,
                    new RedisKeys(loc.prefix),
                    description,
                    () -> client.getPool().clear(),
                    new ServerDeadlines(loc.timeout.toMillis(), System::nanoTime));
            store.ping();
            if (loc.password != null && loc.user == null) {
                refuseUnneededPassword(client, loc.password, description);
            }
            JedisClientConfig cfg = clientConfig(loc);
            HostAndPort at = new HostAndPort(loc.host, loc.port);
            return new RedisLockBackend(
                    store,
                    new RedisWakeups(client, () -> new Jedis(at, cfg), loc.prefix, description),
                    config.ticker(),
                    config.clock(),
                    loc.poll,
                    loc.timeout,
                    loc.barge,
                    client);
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * The client lets a password for a server that has none pass in silence; docs/redis.md
     * promises to refuse it (a password that guards nothing is a misconfiguration: the wrong
     * server, or one whose password was removed). One AUTH says: a server without a password
     * answers that none is configured; one with a password accepts the one the client logged in with.
     */
    private static void refuseUnneededPassword(RedisClient client, String password, String description) {
        try {
            client.sendCommand(Protocol.Command.AUTH, password);
        } catch (JedisDataException e) {
            String msg = e.getMessage() == null ? "" : e.getMessage();
            if (msg.contains("without any password configured") || msg.contains("no password is set")) {
                throw new BackendFailures(description).refused(null, RedisFailures.access(msg), e);
            }
            throw RedisFailures.translate(e, description, null, key -> "value");
        } catch (RuntimeException e) {
            throw RedisFailures.translate(e, description, null, key -> "value");
        }
    }

    /**
     * A pooled client with the URI's credentials, TLS (with host name verification) and timeouts.
     * TLS goes through {@code ssl(true)} and {@code sslParameters}, deprecated in Jedis 8 for
     * {@code SslOptions}: they take the JVM's default trust store ({@code javax.net.ssl.trustStore}),
     * which is what a URI can promise; anything else is for an injected client.
     */
    static RedisClient client(RedisLocation loc) {
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(loc.pool);
        pool.setMaxIdle(loc.pool);
        pool.setMinIdle(0);
        pool.setBlockWhenExhausted(true);
        pool.setMaxWait(loc.timeout);
        pool.setJmxEnabled(false);
        return RedisClient.builder()
                .hostAndPort(loc.host, loc.port)
                .clientConfig(clientConfig(loc))
                .poolConfig(pool)
                .build();
    }

    /** The URI's credentials, TLS and timeouts, for the pool and for the subscriber's own connection. */
    @SuppressWarnings("deprecation")
    static JedisClientConfig clientConfig(RedisLocation loc) {
        int timeoutMs = (int) loc.timeout.toMillis();
        DefaultJedisClientConfig.Builder cfg = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMs)
                .socketTimeoutMillis(timeoutMs)
                .database(loc.database)
                .clientName("interlock")
                .resp2()
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
        if (loc.user != null) {
            cfg.user(loc.user);
        }
        if (loc.password != null) {
            cfg.password(loc.password);
        }
        if (loc.tls) {
            SSLParameters params = new SSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            cfg.ssl(true).sslParameters(params);
        }
        return cfg.build();
    }
}
