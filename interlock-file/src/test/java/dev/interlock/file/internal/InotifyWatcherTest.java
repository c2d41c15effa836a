package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process's one inotify watcher: several users of one inode each get the events they asked
 * for, none of them loses its events when another comes or goes, and a watch follows the open file,
 * not its name. "Not woken" is checked without waiting for nothing: the watcher passes events on in
 * the kernel's order from one thread, so once a later event has reached a waker, every earlier
 * one has been dispatched.
 */
class InotifyWatcherTest {
    private static final long WAIT = Timing.seconds(10).toNanos();

    @TempDir
    Path tmp;

    private final List<Integer> fds = new ArrayList<>();
    private final List<InotifyWatcher.Watch> watches = new ArrayList<>();

    @AfterEach
    void close() {
        watches.forEach(InotifyWatcher.Watch::close);
        fds.forEach(LibcFiles::close);
    }

    private int open(Path p) {
        int fd = LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.path(p), LibcFiles.O_RDONLY | LibcFiles.O_CLOEXEC, 0);
        assertThat(fd).as("open %s: %s", p, Errno.describeLast()).isNotNegative();
        fds.add(fd);
        return fd;
    }

    private InotifyWatcher.Watch watch(int fd, int mask, Waker waker) {
        InotifyWatcher.Watch w = InotifyWatcher.process().watch(fd, mask, waker);
        assertThat(w).as("a watch of descriptor %d", fd).isNotNull();
        watches.add(w);
        return w;
    }

    private static void touchAttributes(Path p) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-r--r--")); // IN_ATTRIB, even unchanged
    }

    private static void writeAndClose(Path p) throws IOException {
        Files.writeString(p, "x"); // IN_MODIFY, IN_CLOSE_WRITE
    }

    @Test
    void twoUsersOfOneInode_areBothWoken() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker a = new Waker();
        Waker b = new Waker();
        watch(open(f), LibcEvents.IN_ATTRIB, a);
        watch(open(f), LibcEvents.IN_ATTRIB, b);
        touchAttributes(f);
        assertThat(a.awaitChange(0, WAIT)).as("first user woken").isTrue();
        assertThat(b.awaitChange(0, WAIT)).as("second user woken").isTrue();
    }

    @Test
    void closingOneWatch_doesNotDeafenTheOtherOnTheSameInode() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker a = new Waker();
        Waker b = new Waker();
        watch(open(f), LibcEvents.IN_ATTRIB, a);
        InotifyWatcher.Watch wb = watch(open(f), LibcEvents.IN_ATTRIB, b);
        wb.close();
        wb.close(); // idempotent
        touchAttributes(f);
        assertThat(a.awaitChange(0, WAIT)).as("the remaining user woken").isTrue();
    }

    @Test
    void laterWatchWithOtherEvents_doesNotReplaceTheFirstUsersMask() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker closes = new Waker();
        Waker attributes = new Waker();
        watch(open(f), LibcEvents.IN_CLOSE_WRITE, closes);
        watch(open(f), LibcEvents.IN_ATTRIB, attributes); // a plain inotify_add_watch would leave only IN_ATTRIB
        touchAttributes(f);
        assertThat(attributes.awaitChange(0, WAIT))
                .as("woken by the attribute change")
                .isTrue();
        writeAndClose(f);
        assertThat(closes.awaitChange(0, WAIT))
                .as("the first user still gets its close events")
                .isTrue();
        touchAttributes(f);
        assertThat(attributes.awaitChange(1, WAIT))
                .as("the later event has been passed on, so every earlier one too")
                .isTrue();
        assertThat(closes.seq())
                .as("woken once: by the close, not by the attribute changes it did not ask for")
                .isEqualTo(1);
    }

    @Test
    void watch_followsTheOpenFile_notItsName() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker k = new Waker();
        int fd = open(f);
        Files.move(f, tmp.resolve("moved"));
        Files.createFile(f); // someone puts another file under the name
        watch(fd, LibcEvents.IN_ATTRIB, k);
        Waker barrier = new Waker();
        watch(open(tmp.resolve("moved")), LibcEvents.IN_ATTRIB, barrier);
        touchAttributes(f);
        touchAttributes(tmp.resolve("moved"));
        assertThat(barrier.awaitChange(0, WAIT)).isTrue();
        assertThat(k.awaitChange(0, WAIT)).as("the file we hold open changed").isTrue();
        assertThat(k.seq()).as("not woken by the file now under the old name").isEqualTo(1);
    }

    @Test
    void lastWatchOfAnInode_unwatchesIt() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        int before = InotifyWatcher.process().watchedInodes();
        InotifyWatcher.Watch w1 = watch(open(f), LibcEvents.IN_ATTRIB, new Waker());
        InotifyWatcher.Watch w2 = watch(open(f), LibcEvents.IN_CLOSE_WRITE, new Waker());
        assertThat(InotifyWatcher.process().watchedInodes()).isEqualTo(before + 1);
        w1.close();
        assertThat(InotifyWatcher.process().watchedInodes()).isEqualTo(before + 1);
        w2.close();
        assertThat(InotifyWatcher.process().watchedInodes()).isEqualTo(before);
        assertThat(InotifyWatcher.process().idleInodes())
                .as("the kernel's watch is removed later")
                .isPositive();
        InotifyWatcher.process().flushIdle();
        assertThat(InotifyWatcher.process().idleInodes()).isZero();
    }

    @Test
    void anInodeWatchedAgainBeforeItsRemoval_keepsItsKernelWatch_andGetsEvents() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        int fd = open(f);
        InotifyWatcher.process().flushIdle();
        InotifyWatcher.Watch first = watch(fd, LibcEvents.IN_ATTRIB, new Waker());
        first.close();
        Waker k = new Waker();
        watch(fd, LibcEvents.IN_ATTRIB, k); // a waiter of the same lock again, as in a hand-off loop
        assertThat(InotifyWatcher.process().idleInodes()).isZero();
        touchAttributes(f);
        assertThat(k.awaitChange(0, WAIT)).isTrue();
    }

    @Test
    void waker_awaitChange_returnsAtOnceIfAlreadyMovedOn_andTimesOutOtherwise() throws Exception {
        Waker k = new Waker();
        long seen = k.seq();
        k.wake();
        assertThat(k.awaitChange(seen, WAIT)).isTrue();
        assertThat(k.awaitChange(k.seq(), 0)).isFalse();
    }

    @Test
    void waker_awaitChange_isInterruptible() {
        Waker k = new Waker();
        Thread.currentThread().interrupt();
        try {
            k.awaitChange(k.seq(), WAIT);
            org.assertj.core.api.Assertions.fail("not interrupted");
        } catch (InterruptedException expected) {
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }

    // ------------------------------------------------------------ who reads inotify

    /** A thread that waits on {@code k} (from {@code seen}, at most {@code nanos}) and records how it ended. */
    private static final class Waiting {
        final Thread thread;
        volatile Boolean changed;
        volatile Throwable failure;
        volatile boolean interruptedAfter;

        Waiting(Waker k, long seen, long nanos) {
            thread = new Thread(
                    () -> {
                        try {
                            changed = k.awaitChange(seen, nanos);
                        } catch (Throwable t) {
                            failure = t;
                            interruptedAfter = Thread.currentThread().isInterrupted();
                        }
                    },
                    "waiting-test");
            thread.setDaemon(true);
            thread.start();
        }

        void join() throws InterruptedException {
            thread.join(Timing.seconds(10).toMillis());
            assertThat(thread.isAlive()).as("the waiting thread returned").isFalse();
        }
    }

    /** A thread waiting on {@code k}, which watches the file {@code f}, once it reads inotify for the process. */
    private Waiting leaderOn(Path f, Waker k) throws InterruptedException {
        watch(open(f), LibcEvents.IN_ATTRIB, k);
        Waiting w = new Waiting(k, k.seq(), Timing.seconds(60).toNanos());
        awaitState("the waiter leads", InotifyWatcher.process()::hasLeader);
        return w;
    }

    private static void awaitState(String what, java.util.function.BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + WAIT;
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waited for: %s", what).isNegative();
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    @Test
    void theWaitingThreadReadsInotifyItself_noThreadIsStartedForIt() throws Exception {
        InotifyWatcher watcher = InotifyWatcher.process();
        Path f = Files.createFile(tmp.resolve("f"));
        Waker k = new Waker();
        long own = watcher.ownWakeups();
        Waiting w = leaderOn(f, k);
        touchAttributes(f);
        w.join();
        assertThat(w.failure).isNull();
        assertThat(w.changed).as("woken by the change").isTrue();
        assertThat(watcher.ownWakeups())
                .as("the waiter found its own event: the kernel woke it directly")
                .isGreaterThan(own);
        assertThat(watcher.hasLeader()).as("nobody leads once nobody waits").isFalse();
        assertThat(Thread.getAllStackTraces().keySet())
                .as("no reader thread of ours")
                .noneMatch(t -> t.getName().startsWith("interlock-inotify"));
    }

    @Test
    void aLeaderThatStopsWaiting_handsReadingToAFollower() throws Exception {
        InotifyWatcher watcher = InotifyWatcher.process();
        Path f1 = Files.createFile(tmp.resolve("f1"));
        Path f2 = Files.createFile(tmp.resolve("f2"));
        Waker first = new Waker();
        Waker second = new Waker();
        watch(open(f1), LibcEvents.IN_ATTRIB, first);
        watch(open(f2), LibcEvents.IN_ATTRIB, second);
        long promotions = watcher.promotions();
        Waiting leader = new Waiting(first, first.seq(), Timing.seconds(60).toNanos());
        awaitState("the first waiter leads", watcher::hasLeader);
        // Long enough that only a hand-over, not its own time running out, lets the follower see its event.
        Waiting follower = new Waiting(second, second.seq(), Timing.seconds(60).toNanos());
        awaitState(
                "the second waiter sleeps as a follower",
                () -> follower.thread.getState() == Thread.State.TIMED_WAITING);
        touchAttributes(f1);
        leader.join();
        assertThat(leader.changed).isTrue();
        awaitState("the follower took over", () -> watcher.promotions() > promotions && watcher.hasLeader());
        touchAttributes(f2);
        follower.join();
        assertThat(follower.failure).isNull();
        assertThat(follower.changed)
                .as("the follower saw its own event after the leader left")
                .isTrue();
    }

    @Test
    void interruptingTheLeader_endsItsPoll_withInterruptedException() throws Exception {
        InotifyWatcher watcher = InotifyWatcher.process();
        Waiting w = leaderOn(Files.createFile(tmp.resolve("f")), new Waker());
        awaitState(
                "the waiter is in poll(2)", () -> w.thread.getState() == Thread.State.RUNNABLE && watcher.hasLeader());
        w.thread.interrupt();
        w.join();
        assertThat(w.failure).isInstanceOf(InterruptedException.class);
        assertThat(w.interruptedAfter)
                .as("the interrupt status is cleared, as with any InterruptedException")
                .isFalse();
        assertThat(watcher.hasLeader()).isFalse();
    }

    @Test
    void aLeaderAlreadyInterrupted_returnsAtOnce() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker k = new Waker();
        watch(open(f), LibcEvents.IN_ATTRIB, k);
        Thread.currentThread().interrupt();
        try {
            k.awaitChange(k.seq(), Timing.seconds(60).toNanos());
            org.assertj.core.api.Assertions.fail("not interrupted");
        } catch (InterruptedException expected) {
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
        assertThat(InotifyWatcher.process().hasLeader()).isFalse();
    }

    @Test
    void wakingTheLeadersWakerFromAnotherThread_endsItsPoll() throws Exception {
        Waker k = new Waker();
        Waiting w = leaderOn(Files.createFile(tmp.resolve("f")), k);
        k.wake(); // what a lock space does to its waiters when it closes
        w.join();
        assertThat(w.changed).isTrue();
    }

    @Test
    void aLeaderWhoseTimeIsUp_returnsFalse_andLeavesNoLeader() throws Exception {
        Path f = Files.createFile(tmp.resolve("f"));
        Waker k = new Waker();
        watch(open(f), LibcEvents.IN_ATTRIB, k);
        long start = System.nanoTime();
        assertThat(k.awaitChange(k.seq(), java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5)))
                .isFalse();
        assertThat(System.nanoTime() - start)
                .as("waited its time")
                .isGreaterThanOrEqualTo(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5));
        assertThat(InotifyWatcher.process().hasLeader()).isFalse();
    }
}
