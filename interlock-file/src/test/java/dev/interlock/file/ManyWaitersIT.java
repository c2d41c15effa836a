package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.InotifyWatcher;
import dev.interlock.file.internal.KernelWait;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A thousand threads of one process each wait for a different name: waiting costs no thread of
 * ours and, on {@code dir:}, two descriptors for the whole process (one inotify instance, one
 * eventfd), whatever the number of waiters; on {@code flock:}, each waiter sleeps in flock(2) with
 * a POSIX timer of its own, deleted when it returns; every waiter gets its lock when it is released, although only one of
 * them reads inotify at a time and the others depend on it passing their events on.
 *
 * {@snippet lang="shell" :
 * ./mvnw -B -ntp -o -pl interlock-file -am verify -Dit.test=ManyWaitersIT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
 * }
 */
class ManyWaitersIT {
    private static final int WAITERS = 1000;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"flock", "dir"})
    void aThousandWaitersOnAThousandNames_costNoThreadAndTwoDescriptors(String scheme) throws Exception {
        String uri = scheme + ":" + tmp.resolve("locks");
        try (LockSpace holder = Interlock.open(uri);
                LockSpace waiting = Interlock.open(uri)) {
            List<Lease> held = new ArrayList<>();
            for (int i = 0; i < WAITERS; i++) {
                held.add(holder.tryAcquire("n-" + i).orElseThrow());
            }
            Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
            long timersBefore = timers();
            AtomicInteger got = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(WAITERS);
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < WAITERS; i++) {
                String name = "n-" + i;
                Thread t = new Thread(
                        () -> {
                            try (Lease l = waiting.acquire(name, Timing.seconds(120))) {
                                got.incrementAndGet();
                            } catch (Throwable e) {
                                failure.compareAndSet(null, e);
                            } finally {
                                done.countDown();
                            }
                        },
                        "waiter-" + i);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            // Every waiter has tried, failed and waits: on dir:, one inode watched per waiter; on
            // flock:, each sleeps in flock(2) with a timer of its own (KernelWait).
            boolean kernel = scheme.equals("flock") && KernelWait.usable();
            long deadline = System.nanoTime() + Timing.seconds(120).toNanos();
            Set<Thread> notSeenInFlock = new HashSet<>(threads);
            long mostTimers = 0;
            while (kernel ? !notSeenInFlock.isEmpty() : InotifyWatcher.process().watchedInodes() < WAITERS) {
                assertThat(System.nanoTime())
                        .as(
                                "all %d waiters waiting (now %d watched, %d not seen in flock(2))",
                                WAITERS, InotifyWatcher.process().watchedInodes(), notSeenInFlock.size())
                        .isLessThan(deadline);
                notSeenInFlock.removeIf(t -> inKernelFlock(t.getStackTrace()));
                if (kernel) {
                    // A waiter's wait is cut in slices of about 200 ms, each with a timer of its own.
                    long t = timers() - timersBefore;
                    assertThat(t).as("at most one timer per sleeping waiter").isLessThanOrEqualTo(WAITERS);
                    mostTimers = Math.max(mostTimers, t);
                }
                Thread.sleep(10); // waiting for real threads to reach their wait, not for time to pass
            }
            // Not Thread.activeCount(): the spaces' own pools may start threads meanwhile (a
            // renewal, a waiter's queue entry on dir:), up to their bounds, and that is no cost per
            // waiter. Every other new thread must be a waiter.
            Set<Thread> ours = new HashSet<>(Thread.getAllStackTraces().keySet());
            ours.removeAll(threadsBefore);
            threads.forEach(ours::remove);
            assertThat(ours)
                    .as("threads: the waiters themselves, and the spaces' bounded pools")
                    .allMatch(t -> t.getName().matches("interlock-(timer|backend|notify)"), "a pool thread of a space")
                    .hasSizeLessThanOrEqualTo(2 * (1 + 4 + 2));
            assertThat(Thread.getAllStackTraces().keySet())
                    .noneMatch(t -> t.getName().startsWith("interlock-inotify"));
            // The holders' watch for moved lock directories (dir:) has an instance of its own, one per process too.
            int holders = dev.interlock.file.internal.EntryWatcher.process().instances();
            assertThat(countDescriptors("anon_inode:inotify") - holders)
                    .as("inotify instances of the process for waiters")
                    .isLessThanOrEqualTo(1);
            assertThat(countDescriptors("anon_inode:[eventfd]"))
                    .as("eventfds of the process")
                    .isLessThanOrEqualTo(1);
            if (kernel) {
                // Each waiter was seen in flock(2) itself, past its timer's creation: that proves a
                // timer per sleeping waiter; the count of the process's timers, sampled meanwhile,
                // shows they exist and never outnumber the waiters.
                assertThat(mostTimers).as("timers seen while the waiters slept").isBetween(1L, (long) WAITERS);
            } else {
                assertThat(countDescriptors("anon_inode:inotify") - holders)
                        .as("inotify instances of the process for waiters")
                        .isEqualTo(1);
                assertThat(countDescriptors("anon_inode:[eventfd]"))
                        .as("eventfds of the process")
                        .isEqualTo(1);
            }

            long start = System.nanoTime();
            for (Lease l : held) {
                l.close();
            }
            assertThat(done.await(120, java.util.concurrent.TimeUnit.SECONDS))
                    .as("every waiter returned")
                    .isTrue();
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(failure.get()).isNull();
            assertThat(got.get()).isEqualTo(WAITERS);
            System.out.printf(
                    Locale.ROOT,
                    "%s: %d waiters on %d names all granted %d ms after the releases began%n",
                    scheme,
                    WAITERS,
                    WAITERS,
                    ms);
            for (Thread t : threads) {
                t.join(Timing.seconds(10).toMillis());
            }
            assertThat(timers()).as("every timer deleted").isEqualTo(timersBefore);
        }
    }

    /** True if the stack is in flock(2) called by KernelWait.flock: the sleep itself, its timer armed. */
    private static boolean inKernelFlock(StackTraceElement[] stack) {
        for (int i = 1; i < Math.min(stack.length, 16); i++) {
            if (stack[i].getClassName().endsWith(".KernelWait")
                    && stack[i].getMethodName().equals("flock")) {
                return stack[i - 1].getClassName().endsWith(".LibcFiles")
                        && stack[i - 1].getMethodName().equals("flock");
            }
        }
        return false;
    }

    /** POSIX timers of the process. */
    private static long timers() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/timers")).stream()
                .filter(l -> l.startsWith("ID:"))
                .count();
    }

    private static long countDescriptors(String target) throws IOException {
        long n = 0;
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        n++;
                    }
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        }
        return n;
    }
}
