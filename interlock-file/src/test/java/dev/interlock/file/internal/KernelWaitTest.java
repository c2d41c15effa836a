package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wait that sleeps in flock(2) itself: the thread is seen in the flock system call by the kernel
 * ({@code /proc/self/task/TID/syscall}), a release from another open file reaches it there, and
 * its time limit, an interrupt and a wake-up each end it. Every wait deletes its timer
 * ({@code /proc/self/timers}).
 */
class KernelWaitTest {
    /** The number of flock(2): 73 on x86-64, 32 in asm-generic. */
    private static final long SYS_FLOCK = LibcSignals.SYS_GETTID == 186 ? 73 : 32;

    @TempDir
    Path tmp;

    private final List<Integer> fds = new ArrayList<>();
    private int holder;
    private int waiter;

    @BeforeEach
    void holdTheLock() throws IOException {
        assumeTrue(KernelWait.usable(), "kernel waits are not usable here");
        Path f = Files.createFile(tmp.resolve("lock"));
        holder = open(f);
        waiter = open(f);
        assertThat(LibcFiles.flock(holder, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB))
                .isZero();
    }

    @AfterEach
    void close() {
        fds.forEach(LibcFiles::close);
    }

    private int open(Path p) {
        int fd = LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.path(p), LibcFiles.O_RDWR | LibcFiles.O_CLOEXEC, 0);
        assertThat(fd).as("open %s: %s", p, Errno.describeLast()).isNotNegative();
        fds.add(fd);
        return fd;
    }

    private static long timers() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/timers")).stream()
                .filter(l -> l.startsWith("ID:"))
                .count();
    }

    /** A thread waiting with {@link KernelWait#flock}; its thread id is known once it has started. */
    private static final class Waiting {
        final AtomicLong tid = new AtomicLong(-1);
        final AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        final CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        volatile boolean interruptedAfter;
        final Waker waker = new Waker();
        final Thread thread;

        Waiting(int fd, long nanos) {
            thread = new Thread(
                    () -> {
                        tid.set(LibcSignals.syscall(LibcSignals.SYS_GETTID, 0, null, null, 0));
                        try {
                            result.set(KernelWait.flock(fd, LibcFiles.LOCK_EX, nanos, waker, waker.seq()));
                            thrown.complete(null);
                        } catch (Throwable t) {
                            interruptedAfter = Thread.currentThread().isInterrupted();
                            thrown.complete(t);
                        }
                    },
                    "kernel-waiter");
            thread.start();
        }

        /** True while the thread sleeps in flock(2). */
        boolean inFlock() throws IOException {
            long t = tid.get();
            if (t < 0) {
                return false;
            }
            String line = Files.readString(Path.of("/proc/self/task/" + t + "/syscall"))
                    .trim();
            return line.startsWith(SYS_FLOCK + " ");
        }

        void awaitInFlock() {
            await().atMost(Timing.seconds(10)).until(this::inFlock);
        }

        Throwable end() throws Exception {
            return thrown.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    @Test
    void theWaiterSleepsInFlock_andTheReleaseHandsItTheLock() throws Exception {
        long before = timers();
        Waiting w = new Waiting(waiter, Timing.seconds(60).toNanos());
        w.awaitInFlock();
        assertThat(timers()).as("its timer").isEqualTo(before + 1);
        assertThat(LibcFiles.flock(holder, LibcFiles.LOCK_UN)).isZero();
        assertThat(w.end()).isNull();
        assertThat(w.result.get()).isEqualTo(KernelWait.LOCKED);
        assertThat(LibcFiles.flock(holder, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB))
                .as("the waiter holds it")
                .isEqualTo(-1);
        assertThat(timers()).as("the timer is deleted").isEqualTo(before);
    }

    @Test
    void theTimeLimit_endsTheWaitWithoutTheLock() throws Exception {
        long before = timers();
        long start = System.nanoTime();
        Waiting w = new Waiting(waiter, TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(w.end()).isNull();
        long took = System.nanoTime() - start;
        assertThat(w.result.get()).isEqualTo(KernelWait.ENDED);
        assertThat(took).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(LibcFiles.flock(waiter, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB))
                .as("nothing was taken")
                .isEqualTo(-1);
        assertThat(timers()).isEqualTo(before);
    }

    @Test
    void anInterrupt_endsTheSleepWithInterruptedException_andClearsTheStatus() throws Exception {
        long before = timers();
        Waiting w = new Waiting(waiter, Timing.seconds(60).toNanos());
        w.awaitInFlock();
        w.thread.interrupt();
        Throwable t = w.end();
        assertThat(t).isInstanceOf(InterruptedException.class);
        w.thread.join(Timing.seconds(10).toMillis());
        assertThat(w.interruptedAfter).as("status cleared").isFalse();
        assertThat(timers()).isEqualTo(before);
    }

    @Test
    void anAlreadyInterruptedThread_doesNotSleep() throws Exception {
        AtomicInteger result = new AtomicInteger(Integer.MIN_VALUE);
        Waker waker = new Waker();
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> result.set(KernelWait.flock(
                        waiter, LibcFiles.LOCK_EX, Timing.seconds(60).toNanos(), waker, waker.seq())))
                .isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).as("status cleared").isFalse();
    }

    @Test
    void aWakeUp_endsTheSleepWithoutTheLock() throws Exception {
        Waiting w = new Waiting(waiter, Timing.seconds(60).toNanos());
        w.awaitInFlock();
        w.waker.wake();
        assertThat(w.end()).isNull();
        assertThat(w.result.get()).isEqualTo(KernelWait.ENDED);
    }

    @Test
    void aWakeUpBeforeTheWait_isNotMissed() throws Exception {
        Waker waker = new Waker();
        long seen = waker.seq();
        waker.wake();
        assertThat(KernelWait.flock(
                        waiter, LibcFiles.LOCK_EX, Timing.seconds(60).toNanos(), waker, seen))
                .isEqualTo(KernelWait.ENDED);
    }
}
