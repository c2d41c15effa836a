package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

/**
 * Bounded barging on {@code redis:} ({@code barge=N}, docs/redis.md): a writer may take back the
 * lock its own space has just released, while nobody else has had it since (the fence value is
 * still the one its release left), ahead of a queued waiter, at most N times in a row; then it
 * gives way, and the waiter gets the lock. A writer of another space, a writer whose lock someone
 * else held since, and a reader never pass the queue. The waiter is a place taken by a raw script
 * call as another process would (it never tries on its own), so every outcome is decided by the
 * test's own calls.
 */
class RedisBargeIT {
    private static final String WAITER = "otherhost:1:2:waiter";
    private final TestRedis redis = TestRedis.shared();
    private final String prefix = TestRedis.newPrefix();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final RedisLockStore store;

    RedisBargeIT() {
        RedisClient admin = redis.admin();
        open.add(admin);
        store = new RedisLockStore(admin, new RedisKeys(prefix), "test", () -> {});
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private LockSpace space(String options) {
        LockSpace s = Interlock.open(redis.uri(prefix, options));
        open.add(s);
        return s;
    }

    /** Another process's writer takes (or keeps) its place in the queue; true if it got the lock. */
    private boolean waiterTries() {
        return store.acquire("w", Mode.EXCLUSIVE, WAITER, 60_000, true, 30_000).granted();
    }

    private void waiterGetsItsTurn() {
        assertThat(waiterTries()).as("the queued waiter's turn").isTrue();
        assertThat(store.release("w", WAITER, store.inspect("w").lastToken().orElseThrow()))
                .isTrue();
    }

    @Test
    void aReleaserTakesItsLockBack_atMostNTimesInARow_thenTheQueuedWaiterGoesFirst() {
        LockSpace mine = space("barge=3");
        Lease held = mine.tryAcquire("w").orElseThrow();
        assertThat(waiterTries()).isFalse();
        long lastToken = held.token();
        for (int i = 0; i < 3; i++) {
            held.close();
            held = mine.tryAcquire("w").orElseThrow(() -> new AssertionError("taken back ahead of the waiter"));
            assertThat(held.token()).isGreaterThan(lastToken);
            lastToken = held.token();
            assertThat(mine.status("w").waiters())
                    .as("the waiter keeps its place")
                    .isEqualTo(1);
        }
        held.close();
        assertThat(mine.tryAcquire("w"))
                .as("the fourth time in a row gives way")
                .isEmpty();
        waiterGetsItsTurn();
        // Having had its turn behind the waiter, the space may take its own releases back again.
        Lease again = mine.tryAcquire("w").orElseThrow();
        assertThat(waiterTries()).isFalse();
        again.close();
        Lease back = mine.tryAcquire("w")
                .orElseThrow(() -> new AssertionError("a new run of takes after a turn in the queue"));
        assertThat(waiterTries()).isFalse();
        back.close();
        waiterGetsItsTurn();
    }

    @Test
    void bargeZero_isStrictlyInTurn() {
        LockSpace mine = space("barge=0");
        Lease held = mine.tryAcquire("w").orElseThrow();
        assertThat(waiterTries()).isFalse();
        held.close();
        assertThat(mine.tryAcquire("w")).as("gives way to the queued waiter").isEmpty();
        waiterGetsItsTurn();
    }

    @Test
    void aWriterThatDidNotReleaseIt_neverJumpsTheQueue() {
        LockSpace holder = space("");
        LockSpace newcomer = space("barge=1000");
        Lease held = holder.tryAcquire("w").orElseThrow();
        assertThat(waiterTries()).isFalse();
        held.close();
        assertThat(newcomer.tryAcquire("w"))
                .as("another space's release is not ours to take back")
                .isEmpty();
        waiterGetsItsTurn();
    }

    @Test
    void aLockSomeoneElseHeldSince_isNotTakenBack() {
        LockSpace mine = space("");
        LockSpace other = space("");
        mine.tryAcquire("w").orElseThrow().close();
        Lease theirs = other.tryAcquire("w").orElseThrow(); // someone had it after our release
        assertThat(waiterTries()).isFalse();
        theirs.close();
        assertThat(mine.tryAcquire("w"))
                .as("the fence value is not the one our release left")
                .isEmpty();
        waiterGetsItsTurn();
    }

    @Test
    void aReader_neverPassesTheQueue() {
        LockSpace mine = space("");
        Lease held = mine.tryAcquire("w").orElseThrow();
        assertThat(waiterTries()).isFalse();
        held.close();
        assertThat(mine.tryAcquire("w", Mode.SHARED))
                .as("a reader waits behind the queued writer")
                .isEmpty();
        waiterGetsItsTurn();
    }

    @Test
    void badBarge_isRefusedWithTheRule() {
        assertThatThrownBy(() -> RedisLocation.parse("redis://localhost?barge=-1", k -> null))
                .hasMessage("redis URI option barge must be a whole number from 0 (strictly in turn) to 1000, was -1");
        assertThatThrownBy(() -> RedisLocation.parse("redis://localhost?barge=many", k -> null))
                .hasMessageContaining("barge must be a whole number from 0");
        assertThat(RedisLocation.parse("redis://localhost?barge=0", k -> null).description())
                .isEqualTo("redis://localhost:6379/0?barge=0");
        RedisClient client = redis.admin();
        open.add(client);
        assertThatThrownBy(() -> RedisLocks.builder(client).barge(1001)).hasMessageContaining("to 1000, was 1001");
    }
}
