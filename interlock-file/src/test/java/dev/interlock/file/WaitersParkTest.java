package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.testkit.Timing;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A thread waiting for a {@code flock:} or {@code dir:} lock parks on a java.util.concurrent
 * condition (or, the one of the process that reads inotify, blocks in poll(2); a platform thread
 * on {@code flock:} sleeps in flock(2) itself), not in
 * {@code Object.wait}: on JDK 21 to 23 a virtual thread in {@code Object.wait} pins its carrier,
 * so a few hundred virtual threads waiting for locks could stall every other virtual thread of
 * the application.
 */
class WaitersParkTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"flock", "dir"})
    void waitingThread_parksInsteadOfWaitingOnAMonitor(String scheme) throws Exception {
        try (LockSpace locks = Interlock.open(scheme + ":" + dir);
                Lease held = locks.tryAcquire("w").orElseThrow()) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread waiter = new Thread(
                    () -> {
                        try {
                            locks.acquire("w", Timing.seconds(60)).close();
                        } catch (InterruptedException | LockTimeoutException e) {
                            // ended by the test
                        } catch (Throwable t) {
                            failure.set(t);
                        }
                    },
                    "waiter");
            waiter.start();
            try {
                // Sample the waiter until it is caught blocked (parked or in a monitor wait), then look at how.
                AtomicReference<StackTraceElement[]> blocked = new AtomicReference<>();
                await().atMost(Timing.seconds(10))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> {
                            StackTraceElement[] stack = waiter.getStackTrace();
                            boolean isBlocked = stack.length > 0
                                    && (isMonitorWait(stack[0])
                                            || stack[0].getMethodName().equals("park")
                                            || inPoll(stack)
                                            || inFlock(stack));
                            if (isBlocked) {
                                blocked.set(stack);
                            }
                            return isBlocked;
                        });
                assertThat(Arrays.stream(blocked.get()).noneMatch(WaitersParkTest::isMonitorWait))
                        .as("%s: the waiting thread's stack %s", scheme, Arrays.toString(blocked.get()))
                        .isTrue();
            } finally {
                waiter.interrupt();
                waiter.join(Timing.seconds(10).toMillis());
            }
            assertThat(failure.get()).isNull();
        }
    }

    /**
     * The one waiting thread of the process that reads inotify blocks in poll(2) (see
     * InotifyWatcher), a few frames under LibcEvents.poll (the JNA or FFM call).
     */
    private static boolean inPoll(StackTraceElement[] stack) {
        return Arrays.stream(stack)
                .limit(12)
                .anyMatch(e -> e.getClassName().endsWith(".LibcEvents")
                        && e.getMethodName().equals("poll"));
    }

    /** A platform thread waiting on {@code flock:} sleeps in flock(2) itself (see KernelWait). */
    private static boolean inFlock(StackTraceElement[] stack) {
        return Arrays.stream(stack)
                .limit(12)
                .anyMatch(e -> e.getClassName().endsWith(".KernelWait")
                        && e.getMethodName().equals("flock"));
    }

    private static boolean isMonitorWait(StackTraceElement e) {
        return e.getClassName().equals("java.lang.Object") && e.getMethodName().startsWith("wait");
    }
}
