package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Semaphores under {@link LockThroughput} on {@code redis:}: one permit of N per cycle, Interlock's
 * {@code limit(N)} against Redisson's {@code RPermitExpirableSemaphore} (the one of Redisson's
 * semaphores that frees a dead holder's permit), both with a 30 s lease (Redisson's permits are
 * not renewed; Interlock's are, in the background).
 */
final class RedisSemaphoreSystems {
    private RedisSemaphoreSystems() {}

    static LockSystem interlock(String uri, int permits) {
        LockSpace locks = Interlock.open(uri + "/0?prefix=bench:");
        return new LockSystem() {
            @Override
            public String label() {
                return "Interlock redis: limit(" + permits + ")";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    Lease lease;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        lease = locks.lock(name)
                                .limit(permits)
                                .lease(RedisSystems.LEASE)
                                .acquire();
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

    static LockSystem redisson(String uri, int permits) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        RedissonClient client = Redisson.create(config);
        return new LockSystem() {
            @Override
            public String label() {
                return "Redisson RPermitExpirableSemaphore(" + permits + ")";
            }

            @Override
            public Locker newLocker() {
                return new Locker() {
                    final Set<String> counted = new HashSet<>();
                    RPermitExpirableSemaphore held;
                    String permit;

                    @Override
                    public void acquire(String name) throws InterruptedException {
                        RPermitExpirableSemaphore s = client.getPermitExpirableSemaphore("redisson-sem:" + name);
                        if (counted.add(name)) {
                            s.trySetPermits(permits); // once per name: a no-op once set
                        }
                        permit = s.acquire(RedisSystems.LEASE.toMillis(), TimeUnit.MILLISECONDS);
                        held = s;
                    }

                    @Override
                    public void release() {
                        held.release(permit);
                    }
                };
            }

            @Override
            public void close() {
                client.shutdown();
            }
        };
    }
}
