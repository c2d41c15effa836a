package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Mode;
import dev.interlock.testkit.SemaphoreChecker;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.RedisClient;

/** Semaphores in redis:'s scripts: the queue order at the script level, and K processes contending for N permits. */
class RedisSemaphoreIT {
    @TempDir
    Path tmp;

    private final String prefix = TestRedis.newPrefix();
    private final RedisKeys keys = new RedisKeys(prefix);
    private RedisClient admin;

    @AfterEach
    void close() {
        if (admin != null) {
            admin.close();
        }
    }

    /**
     * A freed permit is the queued waiter's even before it tries again (a stopped waiter's place
     * holds, as for a lock): a newcomer never takes it, at the script level, with no race.
     */
    @Test
    void aFreedPermit_isKeptForTheQueuedWaiter_notTakenByANewcomer() {
        admin = TestRedis.shared().admin();
        RedisLockStore store = new RedisLockStore(admin, keys, "test", () -> {});
        RedisLockStore.Acquired a = store.acquire("sem", Mode.EXCLUSIVE, 2, "a:1:2:a", 60_000, false, 5000, null);
        RedisLockStore.Acquired b = store.acquire("sem", Mode.EXCLUSIVE, 2, "b:1:2:b", 60_000, false, 5000, null);
        assertThat(a.granted()).isTrue();
        assertThat(b.granted()).isTrue();
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "w:1:2:w", 60_000, true, 5000, null)
                        .granted())
                .as("queued")
                .isFalse();
        assertThat(store.release("sem", "a:1:2:a", a.token(), List.of()).released())
                .isTrue();
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "n:1:2:n", 60_000, false, 5000, null)
                        .granted())
                .as("a newcomer while the waiter is due")
                .isFalse();
        RedisLockStore.Acquired waiter = store.acquire("sem", Mode.EXCLUSIVE, 2, "w:1:2:w", 60_000, true, 5000, null);
        assertThat(waiter.granted()).isTrue();
        assertThat(waiter.token()).isGreaterThan(b.token());
        assertThat(store.inspect("sem").holders())
                .extracting(RedisLockStore.Entry::limit)
                .containsOnly(2);
    }

    /**
     * Bounded barging for permits: the process that freed a permit may take it back ahead of the
     * queue with the fence value its release saw, while nobody has been granted one since; once
     * someone has, that value no longer passes anyone.
     */
    @Test
    void aFreedPermit_isTakenBackAheadOfTheQueue_onlyWithTheFenceItsReleaseSaw() {
        admin = TestRedis.shared().admin();
        RedisLockStore store = new RedisLockStore(admin, keys, "test", () -> {});
        RedisLockStore.Acquired a = store.acquire("sem", Mode.EXCLUSIVE, 2, "a:1:2:a", 60_000, false, 5000, null);
        RedisLockStore.Acquired b = store.acquire("sem", Mode.EXCLUSIVE, 2, "b:1:2:b", 60_000, false, 5000, null);
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "w:1:2:w", 60_000, true, 5000, null)
                        .granted())
                .as("queued")
                .isFalse();
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "v:1:2:v", 60_000, true, 5000, null)
                        .granted())
                .as("queued second")
                .isFalse();
        RedisLockStore.Released freed = store.release("sem", "a:1:2:a", a.token(), List.of());
        assertThat(freed.released()).isTrue();
        assertThat(freed.fence()).as("the fence a release with waiters reports").isEqualTo(Long.toString(b.token()));
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "x:1:2:x", 60_000, false, 5000, "1")
                        .granted())
                .as("a try with another fence value")
                .isFalse();
        RedisLockStore.Acquired back =
                store.acquire("sem", Mode.EXCLUSIVE, 2, "a:1:2:a2", 60_000, false, 5000, freed.fence());
        assertThat(back.granted())
                .as("taken back with the fence the release saw")
                .isTrue();
        assertThat(back.passed()).isTrue();
        RedisLockStore.Released again = store.release("sem", "a:1:2:a2", back.token(), List.of());
        RedisLockStore.Acquired w = store.acquire("sem", Mode.EXCLUSIVE, 2, "w:1:2:w", 60_000, true, 5000, null);
        assertThat(w.granted()).as("the first waiter, in its turn").isTrue();
        store.release("sem", "b:1:2:b", b.token(), List.of());
        assertThat(store.acquire("sem", Mode.EXCLUSIVE, 2, "a:1:2:a3", 60_000, false, 5000, again.fence())
                        .granted())
                .as("a fence value from before someone else's grant passes nobody")
                .isFalse();
    }

    @Test
    void fiveProcesses_onASemaphoreOfTwo_neverMoreThanTwoInside_tokensInGrantOrder() throws Exception {
        String uri = TestRedis.shared().uri(TestRedis.newPrefix(), "");
        List<SemaphoreChecker.Held> held = SemaphoreChecker.run(uri, "imports", 2, 5, 40, tmp);
        assertThat(held).hasSize(200);
    }
}
