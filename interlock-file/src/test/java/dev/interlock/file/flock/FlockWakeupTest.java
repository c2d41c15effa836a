package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.KernelWait;
import dev.interlock.file.internal.LibcEvents;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.Waker;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On the inotify path (virtual threads, and where {@link KernelWait} cannot be used): waiters of several {@code flock:} lock spaces on one directory share the process's inotify
 * watches of the same lock and gate files, and each is woken only by what can let it in: a
 * release wakes the waiter that holds the gate, the gate's release wakes the others; one that
 * stops waiting leaves the others' watches in place. Only inotify moves an attempt's wake-up count (the
 * bounded poll does not), so these tests see the wake-up itself, with a bounded wait and no sleep.
 */
class FlockWakeupTest {
    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private LockSpace holderSpace;
    private Lease held;

    @BeforeEach
    void hold() {
        KernelWait.enable(false); // these tests are about the inotify path; KernelWaitTest covers the other
        holderSpace = Interlock.open("flock:" + dir);
        open.add(holderSpace);
        held = holderSpace.tryAcquire("w").orElseThrow();
    }

    @AfterEach
    void closeAll() throws Exception {
        KernelWait.enable(true);
        held.close();
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** An attempt on "w" in a space of its own, tried once and watching (its first await). */
    private FlockAttempt waiter() throws InterruptedException {
        LockSpace space = Interlock.open("flock:" + dir);
        open.add(space);
        FlockBackend b = (FlockBackend) Spaces.backend(space);
        FlockAttempt a = (FlockAttempt)
                b.attempt(new AcquireSpec("w", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        open.add(a);
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0);
        assertThat(b.watchCount())
                .as("one watch: the lock file if it holds the gate, else the gate file")
                .isEqualTo(1);
        return a;
    }

    /**
     * Returns once every event raised so far on the lock file has been passed on: the process's
     * watcher dispatches in the kernel's order from one thread, so when an attribute change made
     * now has reached a waker of ours, every earlier event has reached its wakers too (this
     * thread reads inotify for the process while it waits: nothing else waits).
     */
    private void settle() throws Exception {
        Path lockFile = dir.resolve("w");
        int fd = LibcFiles.openat(
                LibcFiles.AT_FDCWD, LibcFiles.path(lockFile), LibcFiles.O_RDONLY | LibcFiles.O_CLOEXEC, 0);
        assertThat(fd).isNotNegative();
        Waker barrier = new Waker();
        try (InotifyWatcher.Watch w = InotifyWatcher.process().watch(fd, LibcEvents.IN_ATTRIB, barrier)) {
            Files.setPosixFilePermissions(lockFile, Files.getPosixFilePermissions(lockFile));
            assertThat(barrier.awaitChange(0, Timing.seconds(10).toNanos()))
                    .as("the barrier event arrived")
                    .isTrue();
        } finally {
            LibcFiles.close(fd);
        }
    }

    @Test
    void release_wakesOnlyTheGateHolder_andItsGrantWakesTheOthers() throws Exception {
        FlockAttempt a = waiter(); // holds the gate: the next one in
        FlockAttempt b = waiter(); // waits for the gate
        settle();
        long seenA = a.wakeups();
        long seenB = b.wakeups();
        held.close();
        settle(); // reads the events queued so far, the release's among them, and passes them on
        assertThat(a.wakeups()).as("the gate holder woken by the release").isGreaterThan(seenA);
        assertThat(b.wakeups())
                .as("the other waiter not woken: it could not go on (no herd)")
                .isEqualTo(seenB);
        var granted = a.tryAcquire();
        assertThat(granted)
                .as("the first waiter holds the gate, and now the lock")
                .isPresent();
        settle();
        assertThat(b.wakeups())
                .as("woken when the gate holder got the lock and let the gate go")
                .isGreaterThan(seenB);
        granted.get().release();
    }

    @Test
    void waiterThatGivesUp_leavesTheOtherWaitersWatching() throws Exception {
        FlockAttempt a = waiter(); // holds the gate
        FlockAttempt b = waiter();
        FlockAttempt c = waiter();
        c.close(); // its watch of the gate file goes; the gate must stay watched for b
        settle();
        long seen = b.wakeups();
        held.close();
        settle();
        var granted = a.tryAcquire();
        assertThat(granted).isPresent();
        settle();
        assertThat(b.wakeups())
                .as("the remaining waiter woken by the gate's release")
                .isGreaterThan(seen);
        granted.get().release();
    }

    @Test
    void closingTheSpace_wakesItsWaiters_andReturnsAtOnce() throws Exception {
        LockSpace space = Interlock.open("flock:" + dir);
        FlockBackend b = (FlockBackend) Spaces.backend(space);
        FlockAttempt a = (FlockAttempt)
                b.attempt(new AcquireSpec("w", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0);
        long seen = a.wakeups();
        long start = System.nanoTime();
        space.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("close took").isLessThan(Timing.seconds(1));
        assertThat(a.wakeups()).as("woken by the close").isGreaterThan(seen);
        a.close();
    }
}
