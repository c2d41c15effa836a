package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.file.internal.InotifyWatcher;
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
 * Waiters of several {@code dir:} lock spaces on one directory share the process's inotify watch
 * of the same lock directory; each is woken only by the changes that can let it in (the gate's,
 * for the first in the queue; the removal of the entry ahead, for the others), and one that stops
 * waiting leaves the others' watch in place. Only inotify moves an attempt's wake-up count (the bounded poll does
 * not), so these tests see the wake-up itself, with a bounded wait and no sleep.
 */
class DirWakeupTest {
    @TempDir
    Path dir;

    private final List<AutoCloseable> open = new ArrayList<>();
    private LockSpace holderSpace;
    private Lease held;

    @BeforeEach
    void hold() {
        holderSpace = Interlock.open("dir:" + dir);
        open.add(holderSpace);
        held = holderSpace.tryAcquire("w").orElseThrow();
    }

    @AfterEach
    void closeAll() throws Exception {
        held.close();
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    /** An attempt on "w" in a space of its own, tried once and watching (its first await). */
    private DirAttempt waiter() throws InterruptedException {
        LockSpace space = Interlock.open("dir:" + dir);
        open.add(space);
        DirLockBackend b = (DirLockBackend) Spaces.backend(space);
        DirAttempt a = (DirAttempt)
                b.attempt(new AcquireSpec("w", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        open.add(a);
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0);
        return a;
    }

    /**
     * Returns once every event raised so far in the lock directory has been passed on: the
     * barrier's wait reads inotify (this thread leads: nothing else waits) and passes events on in
     * the kernel's order, so when an attribute change made now has reached a waker of ours, every
     * earlier event has reached its wakers too.
     */
    private void settle() throws Exception {
        Path lockFile = dir.resolve(DirNames.encode("w"));
        int fd = LibcFiles.openat(
                LibcFiles.AT_FDCWD,
                LibcFiles.path(lockFile),
                LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC,
                0);
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
    void release_wakesTheWaitersOfEverySpaceOnTheDirectory() throws Exception {
        DirAttempt a = waiter();
        DirAttempt b = waiter();
        settle();
        long seenA = a.wakeups();
        long seenB = b.wakeups();
        held.close();
        settle(); // reads the events queued so far, the release's among them, and passes them on
        assertThat(a.wakeups()).as("first waiter woken").isGreaterThan(seenA);
        assertThat(b.wakeups()).as("second waiter woken").isGreaterThan(seenB);
        var granted = a.tryAcquire().or(b::tryAcquire); // whichever queued first
        assertThat(granted)
                .as("the first waiter in the queue now holds the lock")
                .isPresent();
        granted.get().release();
    }

    @Test
    void waitersAreWokenOnlyByWhatCanLetThemIn() throws Exception {
        DirAttempt a = waiter();
        assertThat(a.tryAcquire()).isEmpty(); // watching now: waits for the holder's gate
        // Waiters that queue in the same millisecond are ordered by their random nonces: let the
        // clock move on, so that b queues behind a.
        long queuedAt = System.currentTimeMillis();
        while (System.currentTimeMillis() <= queuedAt) {
            Thread.onSpinWait();
        }
        DirAttempt b = waiter();
        assertThat(b.tryAcquire()).isEmpty(); // waits for a to leave the queue
        settle();
        long seenA = a.wakeups();
        long seenB = b.wakeups();
        DirAttempt c = waiter(); // queues (a new entry in the directory), lists, renames nothing
        settle();
        assertThat(a.wakeups())
                .as("a new waiter queueing does not wake the first")
                .isEqualTo(seenA);
        assertThat(b.wakeups()).as("nor the second").isEqualTo(seenB);
        held.close();
        settle();
        assertThat(a.wakeups())
                .as("the holder's release wakes the first waiter")
                .isGreaterThan(seenA);
        assertThat(b.wakeups())
                .as("but not the second, which must let the first go first")
                .isEqualTo(seenB);
        var granted = a.tryAcquire();
        assertThat(granted).isPresent();
        a.close(); // leaves the queue
        settle();
        assertThat(b.wakeups())
                .as("the first waiter leaving the queue wakes the second")
                .isGreaterThan(seenB);
        granted.get().release();
        c.close();
    }

    @Test
    void waiterThatGivesUp_leavesTheOtherWaitersWatching() throws Exception {
        DirAttempt a = waiter();
        DirAttempt b = waiter();
        b.close(); // its watch of the same directory goes; the directory must stay watched for a
        settle();
        long seen = a.wakeups();
        held.close();
        settle();
        assertThat(a.wakeups()).as("the remaining waiter woken").isGreaterThan(seen);
    }

    @Test
    void closingTheSpace_returnsAtOnce() throws Exception {
        LockSpace space = Interlock.open("dir:" + dir);
        DirAttempt a = (DirAttempt) Spaces.backend(space)
                .attempt(new AcquireSpec("w", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        assertThat(a.tryAcquire()).isEmpty();
        a.await(0);
        long start = System.nanoTime();
        a.close();
        space.close();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("close took").isLessThan(Timing.seconds(1));
    }
}
