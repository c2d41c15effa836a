package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LimitMismatchException;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.Grant;
import dev.interlock.spi.support.Spaces;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Semaphores on {@code flock:} ({@link FlockSemaphore}) where the contract cannot look: the order
 * at the level of one try (no race), plain shared locks and {@code flock(1)} beside permits, and
 * what the lock file records.
 */
class FlockSemaphoreTest {
    @TempDir
    Path dir;

    LockSpace locks;
    LockSpace other;

    @BeforeEach
    void open() {
        locks = Interlock.open("flock:" + dir);
        other = Interlock.open("flock:" + dir);
    }

    @AfterEach
    void close() {
        other.close();
        locks.close();
    }

    private Attempt attempt(LockSpace space, String name, int limit, boolean waits) {
        return Spaces.backend(space)
                .attempt(AcquireSpec.builder(name, Mode.EXCLUSIVE, Owner.newAcquisition())
                        .lease(Duration.ofMinutes(1))
                        .limit(limit)
                        .waits(waits)
                        .build());
    }

    /** The waiter that found every slot taken keeps the gate: a freed slot is its, whoever tries first. */
    @Test
    void aFreedPermit_isTheWaitingAttempts_notANewcomers() throws Exception {
        Lease a = locks.lock("fifo").limit(2).tryAcquire().orElseThrow();
        Lease b = locks.lock("fifo").limit(2).tryAcquire().orElseThrow();
        try (Attempt waiter = attempt(other, "fifo", 2, true)) {
            assertThat(waiter.tryAcquire()).as("both permits held").isEmpty();
            a.close();
            try (Attempt newcomer = attempt(locks, "fifo", 2, false)) {
                assertThat(newcomer.tryAcquire())
                        .as("a newcomer, with a permit free")
                        .isEmpty();
            }
            assertThat(locks.lock("fifo").limit(2).tryAcquire()).isEmpty();
            Grant got = waiter.tryAcquire().orElseThrow(() -> new AssertionError("the waiter's permit"));
            assertThat(got.token()).isGreaterThan(b.token());
            got.release();
        }
        b.close();
    }

    /**
     * Every waiting attempt keeps its place, not only the one with the gate: after the first
     * waiter's grant the gate is free and so is the next permit, but the second waiter, which
     * has not tried again yet (a thread not yet run, a process stopped), still comes before a
     * newcomer; a newcomer that waits goes behind it. A waiter that gives up takes its place away.
     */
    @Test
    void aFreedPermit_isTheLaterWaitersToo_notANewcomers() throws Exception {
        LockSpace third = Interlock.open("flock:" + dir);
        try {
            Lease a = locks.lock("fifo").limit(2).tryAcquire().orElseThrow();
            Lease b = locks.lock("fifo").limit(2).tryAcquire().orElseThrow();
            try (Attempt first = attempt(other, "fifo", 2, true);
                    Attempt second = attempt(third, "fifo", 2, true)) {
                assertThat(first.tryAcquire()).as("both permits held").isEmpty();
                assertThat(second.tryAcquire())
                        .as("the gate held by the first waiter")
                        .isEmpty();
                a.close();
                Grant gotFirst = first.tryAcquire().orElseThrow(() -> new AssertionError("the first waiter's permit"));
                b.close();
                try (Attempt newcomer = attempt(locks, "fifo", 2, false)) {
                    assertThat(newcomer.tryAcquire())
                            .as("a newcomer, with the gate and a permit free, while a waiter waits")
                            .isEmpty();
                }
                try (Attempt waitingNewcomer = attempt(locks, "fifo", 2, true)) {
                    assertThat(waitingNewcomer.tryAcquire()).isEmpty();
                    Grant gotSecond =
                            second.tryAcquire().orElseThrow(() -> new AssertionError("the second waiter's permit"));
                    assertThat(gotSecond.token()).isGreaterThan(gotFirst.token());
                    gotFirst.release();
                    assertThat(locks.lock("fifo").limit(2).tryAcquire())
                            .as("a newcomer behind the newcomer that waits")
                            .isEmpty();
                    gotSecond.release();
                }
                assertThat(locks.lock("fifo").limit(2).tryAcquire())
                        .as("once the waiters have gone")
                        .hasValueSatisfying(Lease::close);
            }
        } finally {
            third.close();
        }
    }

    /** A waiter's place goes with its descriptor: one that gives up (a timeout, an interrupt) keeps nobody out. */
    @Test
    void aWaiterThatGivesUp_keepsNoNewcomerOut() {
        Lease held = locks.lock("gone").limit(1).tryAcquire().orElseThrow();
        try (Attempt first = attempt(other, "gone", 1, true)) {
            assertThat(first.tryAcquire()).isEmpty();
            try (Attempt second = attempt(other, "gone", 1, true)) {
                assertThat(second.tryAcquire()).isEmpty();
            }
        }
        held.close();
        assertThat(locks.lock("gone").limit(1).tryAcquire())
                .as("no place is left behind")
                .hasValueSatisfying(Lease::close);
    }

    @Test
    void aTimeout_namesTheHolders_withoutALeaseTheyDoNotHave() {
        try (Lease held = locks.lock("one").limit(1).tryAcquire().orElseThrow()) {
            assertThatThrownBy(() -> other.lock("one").limit(1).acquire(Duration.ofMillis(50)))
                    .isInstanceOf(LockTimeoutException.class)
                    .hasMessageContaining(held.owner().id())
                    .hasMessageContaining("token " + held.token())
                    .hasMessageNotContaining("lease until");
        }
    }

    /** Removing a held slot file would let another process take a permit beyond the limit: the holder is told. */
    @Test
    void aSlotFileRemovedWhileHeld_isALostPermit() throws Exception {
        Lease permit = locks.lock("slots").limit(2).tryAcquire().orElseThrow();
        try {
            permit.renew();
            Files.delete(dir.resolve(".gates/slots+0"));
            assertThatThrownBy(permit::renew)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("the slot file of this permit of 'slots' was removed or replaced");
        } finally {
            permit.close();
        }
    }

    @Test
    void aPlainSharedLock_andAPermit_neverHoldOneNameTogether() {
        try (Lease permit = locks.lock("mixed").limit(3).tryAcquire().orElseThrow()) {
            assertThatThrownBy(() -> other.lock("mixed").shared().tryAcquire())
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("is held as a semaphore of 3 but a plain lock was asked");
            assertThat(locks.status("mixed").holders()).hasSize(1);
        }
        try (Lease reader = locks.lock("mixed").shared().tryAcquire().orElseThrow()) {
            assertThatThrownBy(() -> other.lock("mixed").limit(3).tryAcquire())
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("is held as a plain lock but a semaphore of 3 was asked");
            assertThat(locks.status("mixed").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.mode()).isEqualTo(Mode.SHARED));
        }
        other.lock("mixed").limit(3).tryAcquire().orElseThrow().close();
    }

    /** A plain lock that waited behind plain holders is refused, not granted, once permits hold the name. */
    @Test
    void aPlainLockAfterPermits_ofAnotherLimit_takesEffectOnceAllAreGone() {
        Lease one = locks.lock("swap").limit(1).tryAcquire().orElseThrow();
        assertThatThrownBy(() -> other.lock("swap").limit(2).tryAcquire()).isInstanceOf(LimitMismatchException.class);
        one.close();
        try (Lease two = other.lock("swap").limit(2).tryAcquire().orElseThrow();
                Lease three = locks.lock("swap").limit(2).tryAcquire().orElseThrow()) {
            assertThat(three.token()).isGreaterThan(two.token());
            assertThat(locks.status("swap").limit()).isEqualTo(2);
        }
        try (Lease plain = locks.tryAcquire("swap").orElseThrow()) {
            assertThat(locks.status("swap").limit()).isZero();
        }
    }

    /** flock(1) on the name's file: its exclusive lock is a plain lock, and it cannot get in beside permits. */
    @Test
    void flock1_andPermits_excludeEachOther() throws Exception {
        Path file = dir.resolve("nightly");
        try (Lease permit = locks.lock("nightly").limit(2).tryAcquire().orElseThrow()) {
            Process p = new ProcessBuilder("flock", "-n", "-x", file.toString(), "true").start();
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("flock -n -x beside a permit").isEqualTo(1);
        }
        Process holder = new ProcessBuilder("flock", "-x", file.toString(), "sh", "-c", "echo held; cat >/dev/null")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            BufferedReader r =
                    new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
            assertThat(r.readLine()).isEqualTo("held");
            assertThatThrownBy(() -> locks.lock("nightly").limit(2).tryAcquire())
                    .isInstanceOf(LimitMismatchException.class)
                    .hasMessageContaining("held as a plain lock");
        } finally {
            holder.getOutputStream().close();
            holder.waitFor(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void theLockFile_recordsTheLimit_andEachPermit_theSlotFilesLiveInGates() throws Exception {
        try (Lease a = locks.lock("gpu").limit(2).tryAcquire().orElseThrow();
                Lease b = other.lock("gpu").limit(2).tryAcquire().orElseThrow()) {
            String content = Files.readString(dir.resolve("gpu"));
            assertThat(content)
                    .contains("\nlimit 2\n")
                    .contains("permit 0 " + a.token() + " " + a.owner().id())
                    .contains("permit 1 " + b.token() + " " + b.owner().id());
            assertThat(dir.resolve(".gates/gpu+0")).isRegularFile();
            assertThat(dir.resolve(".gates/gpu+1")).isRegularFile();
            assertThat(locks.list()).extracting(i -> i.name()).containsExactly("gpu");
        }
    }
}
