package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Spaces;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bounded barging ({@code ?barge=N}, docs/dir-protocol.md 4.6): a writer may take back the lock its
 * own process has just released, while nobody else has had it since, ahead of a queued waiter, at
 * most N times in a row; then it gives way, and the waiter gets the lock. A writer of another
 * process (or one that did not release it) never jumps the queue. The waiter here is an attempt
 * that has tried, queued and stopped (it never tries on its own), so every outcome is decided by
 * the test's own calls.
 */
class DirBargeTest {
    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private LockSpace space(String options) {
        LockSpace s = Interlock.open("dir:" + dir + options);
        open.add(s);
        return s;
    }

    /** An attempt on "w" in a space of its own that has tried once and taken a place in the queue. */
    private DirAttempt queuedWaiter() throws InterruptedException {
        DirLockBackend b = (DirLockBackend) Spaces.backend(space(""));
        DirAttempt a = (DirAttempt)
                b.attempt(new AcquireSpec("w", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        open.add(a);
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0); // queues
        return a;
    }

    @Test
    void aReleaserTakesItsLockBack_atMostNTimesInARow_thenTheQueuedWaiterGoesFirst() throws Exception {
        LockSpace mine = space("?barge=3");
        Lease held = mine.tryAcquire("w").orElseThrow();
        DirAttempt waiter = queuedWaiter();
        long lastToken = held.token();
        for (int i = 0; i < 3; i++) {
            held.close();
            held = mine.tryAcquire("w").orElseThrow(() -> new AssertionError("taken back ahead of the waiter"));
            assertThat(held.token()).isGreaterThan(lastToken);
            lastToken = held.token();
        }
        held.close();
        assertThat(mine.tryAcquire("w"))
                .as("the fourth time in a row gives way")
                .isEmpty();
        Optional<Grant> g = waiter.tryAcquire();
        assertThat(g).as("the queued waiter's turn").isPresent();
        waiter.close();
        g.get().release();
        // Having had its turn behind the waiter, the process may take its own releases back again.
        Lease again = mine.tryAcquire("w").orElseThrow();
        DirAttempt next = queuedWaiter();
        again.close();
        Lease back = mine.tryAcquire("w")
                .orElseThrow(() -> new AssertionError("a new run of takes after a turn in the queue"));
        assertThat(next.tryAcquire()).isEmpty();
        back.close();
        Optional<Grant> n = next.tryAcquire();
        assertThat(n).isPresent();
        next.close();
        n.get().release();
    }

    @Test
    void bargeZero_isStrictlyInTurn() throws Exception {
        LockSpace mine = space("?barge=0");
        Lease held = mine.tryAcquire("w").orElseThrow();
        DirAttempt waiter = queuedWaiter();
        held.close();
        assertThat(mine.tryAcquire("w")).as("gives way to the queued waiter").isEmpty();
        Optional<Grant> g = waiter.tryAcquire();
        assertThat(g).isPresent();
        waiter.close();
        g.get().release();
    }

    @Test
    void aWriterThatDidNotReleaseIt_neverJumpsTheQueue() throws Exception {
        LockSpace holder = space("");
        LockSpace newcomer = space("?barge=1000");
        Lease held = holder.tryAcquire("w").orElseThrow();
        DirAttempt waiter = queuedWaiter();
        held.close();
        assertThat(newcomer.tryAcquire("w"))
                .as("another space's release is not ours to take back")
                .isEmpty();
        Optional<Grant> g = waiter.tryAcquire();
        assertThat(g).isPresent();
        waiter.close();
        g.get().release();
    }

    @Test
    void aLockSomeoneElseHeldSince_isNotTakenBack() throws Exception {
        LockSpace mine = space("");
        LockSpace other = space("");
        Lease held = mine.tryAcquire("w").orElseThrow();
        held.close();
        Lease theirs = other.tryAcquire("w").orElseThrow(); // someone had it after our release
        DirAttempt waiter = queuedWaiter();
        theirs.close();
        assertThat(mine.tryAcquire("w"))
                .as("the free gate is not the one we left")
                .isEmpty();
        Optional<Grant> g = waiter.tryAcquire();
        assertThat(g).isPresent();
        waiter.close();
        g.get().release();
    }

    @Test
    void badBarge_isRefusedWithTheRule() {
        assertThatThrownBy(() -> Interlock.open("dir:" + dir + "?barge=-1"))
                .hasMessageContaining("barge must be a whole number from 0");
        assertThatThrownBy(() -> Interlock.open("dir:" + dir + "?barge=x"))
                .hasMessageContaining("barge must be a whole number from 0");
    }
}
