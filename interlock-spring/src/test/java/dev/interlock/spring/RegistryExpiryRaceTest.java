package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import dev.interlock.testkit.Timing;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The registry forgets idle lock objects without a lock of its own on the lock path: threads that
 * lock and reenter through old and new objects of a few keys, while another thread forgets every
 * idle object as fast as it can, must keep exclusion (a plain counter loses no increment), never
 * wait for themselves (the test ends), and leave no hold behind.
 */
class RegistryExpiryRaceTest {
    static final int THREADS = 4;
    static final int ITERATIONS = 3000;

    static final int KEYS = 8;

    final int[] counters = new int[KEYS]; // counters[k] guarded by the lock of key "k" + k only

    @Test
    void lockingWhileEverythingIdleIsForgotten_keepsExclusionAndReentrancy() throws Exception {
        String ns = UUID.randomUUID().toString();
        ExecutorService pool = Executors.newCachedThreadPool();
        try (LockSpace space = Interlock.open("mem:" + ns)) {
            InterlockLockRegistry registry = new InterlockLockRegistry(space);
            InterlockLock[] first = new InterlockLock[KEYS];
            for (int k = 0; k < KEYS; k++) {
                first[k] = registry.obtain("k" + k);
            }
            AtomicBoolean done = new AtomicBoolean();
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            Set<InterlockLock> seen = Collections.newSetFromMap(new ConcurrentHashMap<>());
            Future<Integer> sweeper = pool.submit(() -> {
                int sweeps = 0;
                while (!done.get()) {
                    registry.expireUnusedOlderThan(-1);
                    sweeps++;
                }
                return sweeps;
            });
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int id = t;
                workers.add(pool.submit(() -> {
                    try {
                        for (int i = 0; i < ITERATIONS; i++) {
                            int k = (i * 7 + id * 3) % KEYS; // keys idle now and then, so that they are forgotten
                            InterlockLock outer =
                                    (i + id) % 3 == 0 ? first[k] : registry.obtain("k" + k); // old objects too
                            outer.lock();
                            try {
                                InterlockLock inner = registry.obtain("k" + k);
                                seen.add(inner);
                                assertThat(inner.tryLock())
                                        .as("a reentry through the current object")
                                        .isTrue();
                                try {
                                    counters[k] = counters[k] + 1;
                                } finally {
                                    inner.unlock();
                                }
                                assertThat(outer.getHoldCount()).isEqualTo(1);
                            } finally {
                                outer.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            for (Future<?> w : workers) {
                w.get(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS);
            }
            done.set(true);
            assertThat(sweeper.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS))
                    .isPositive();
            assertThat(failures).isEmpty();
            assertThat(java.util.Arrays.stream(counters).sum()).isEqualTo(THREADS * ITERATIONS);
            assertThat(seen.size())
                    .as("objects were forgotten and made again meanwhile")
                    .isGreaterThan(KEYS);
            for (int k = 0; k < KEYS; k++) {
                assertThat(registry.obtain("k" + k).isLocked()).isFalse();
                assertThat(space.status("k" + k).isFree()).isTrue();
            }
        } finally {
            pool.shutdownNow();
            MemoryBackend.forget(ns);
        }
    }
}
