package dev.interlock.file.internal;

import dev.interlock.spi.support.Log;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.spi.AbstractInterruptibleChannel;

/**
 * Internal API of Interlock (not for applications; may change in any release): a blocking
 * flock(2) in the waiting thread itself, as {@code flock(1)} waits, that an interrupt, a
 * {@linkplain Waker#wake() wake-up} and a time limit still end exactly.
 *
 * <p>Sleeping in the kernel's lock queue is the shortest hand-off there is: the release wakes the
 * sleeper inside the kernel, which retries there, and a retry that loses to a process taking the
 * lock straight back sleeps again without returning to Java. The inotify wait
 * ({@link InotifyWatcher}) instead wakes the JVM thread for every release, and the thread retries
 * from Java.
 *
 * <p>How the sleep ends: the thread creates a POSIX timer aimed at itself ({@code SIGEV_THREAD_ID})
 * that sends the signal the JDK uses to interrupt blocking I/O ({@code sun.nio.ch.NativeThread}:
 * SIGRTMAX-2, handled by a no-op handler without {@code SA_RESTART}), so the signal makes flock(2)
 * fail with EINTR and nothing else. The timer is armed for the time limit; an interrupt (through
 * the JDK's interrupt hook for channels) or a wake-up re-arms it to fire at once. After its first
 * expiry it fires again every millisecond, so a signal that came just before the thread entered
 * flock(2) is repeated rather than lost. The timer is deleted when the wait ends.
 *
 * <p>Used only where all of that is verified: the architecture's system call numbers are known,
 * the JDK's handler is installed as described (checked with sigaction(2)), and the thread is a
 * platform thread (a virtual thread in a blocking native call would pin its carrier). Elsewhere,
 * and when a timer cannot be created, callers wait through inotify.
 */
public final class KernelWait {
    private static final Log log = Log.of(KernelWait.class);

    /** The signal the JDK interrupts blocking I/O with: SIGRTMAX-2 (64 - 2 on Linux with glibc and musl). */
    static final int SIGNAL = 62;
    /** After the first expiry, the timer fires again this often until the wait has ended. */
    private static final long REPEAT_NANOS = 1_000_000;

    /** {@link #flock} got the lock. */
    public static final int LOCKED = 0;
    /** {@link #flock} ended without the lock: the time is up, or a wake-up came. */
    public static final int ENDED = -1;
    /** {@link #flock} cannot block in the kernel here (no timer): wait another way. */
    public static final int UNAVAILABLE = -2;

    private static volatile boolean enabled = !"false".equals(System.getProperty("interlock.flock.blocking", "true"));
    private static final MethodHandle IS_VIRTUAL = isVirtualHandle();
    private static volatile Boolean usable;

    private KernelWait() {}

    /**
     * Turns kernel waits on or off for the waits that start from now on (on unless the system
     * property {@code interlock.flock.blocking} is {@code false}): for tests and benchmarks of the
     * inotify path.
     */
    public static void enable(boolean on) {
        enabled = on;
    }

    /** True if waits of the current thread can block in the kernel. */
    public static boolean usable() {
        if (!enabled || isVirtual()) {
            return false;
        }
        Boolean u = usable;
        if (u == null) {
            u = check();
            usable = u;
        }
        return u;
    }

    private static boolean check() {
        if (LibcSignals.SYS_GETTID < 0) {
            return false;
        }
        try {
            // Make sure the JDK has installed its handler (the class's initialiser does).
            Class.forName("sun.nio.ch.NativeThread", true, ClassLoader.getPlatformClassLoader());
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            log.debug(
                    "blocking flock(2) waits are off: the JDK's I/O interrupt handler is not there ({})", e.toString());
            return false;
        }
        try {
            byte[] old = new byte[LibcSignals.SIGACTION_SIZE];
            if (LibcSignals.sigaction(SIGNAL, null, old) != 0) {
                return false;
            }
            long handler = LibcFiles.getInt(old, 0) & 0xffffffffL | ((long) LibcFiles.getInt(old, 4)) << 32;
            int flags = LibcFiles.getInt(old, LibcSignals.SIGACTION_FLAGS_OFFSET);
            boolean ok = handler != 0 && handler != 1 && (flags & LibcSignals.SA_RESTART) == 0;
            if (!ok) {
                log.debug(
                        "blocking flock(2) waits are off: signal {} is not handled as the JDK does (handler {}, flags {})",
                        SIGNAL,
                        handler,
                        Integer.toHexString(flags));
            }
            return ok;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            log.debug("blocking flock(2) waits are off: {}", e.toString());
            return false;
        }
    }

    private static MethodHandle isVirtualHandle() {
        try {
            return MethodHandles.publicLookup()
                    .findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null; // JDK 17-20: no virtual threads
        }
    }

    private static boolean isVirtual() {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
        } catch (Throwable t) {
            return true;
        }
    }

    /**
     * flock(2) on {@code fd} with {@code operation} (LOCK_EX or LOCK_SH, blocking), for at most
     * {@code nanos}, or until {@code waker} moves on from {@code seen}.
     *
     * @return {@link #LOCKED}, {@link #ENDED}, {@link #UNAVAILABLE}, or an error number of flock(2)
     * @throws InterruptedException if the thread is interrupted (its status cleared); the lock may
     *     then be held on {@code fd}, which the caller closes
     */
    public static int flock(int fd, int operation, long nanos, Waker waker, long seen) throws InterruptedException {
        if (nanos <= 0 || waker.seq() != seen) {
            return ENDED;
        }
        Timer timer = Timer.create();
        if (timer == null) {
            return UNAVAILABLE;
        }
        long deadline = System.nanoTime() + nanos;
        boolean locked = false;
        int error = 0;
        try {
            timer.arm(nanos);
            waker.blocked = timer;
            timer.enter();
            try {
                // The waker is read after it knows this timer: a wake-up either shows here or fires the timer.
                while (waker.seq() == seen && timer.isOpen()) {
                    if (LibcFiles.flock(fd, operation) == 0) {
                        locked = true;
                        break;
                    }
                    int err = Errno.last();
                    if (err != Errno.EINTR) {
                        error = err;
                        break;
                    }
                    if (System.nanoTime() - deadline >= 0) {
                        break;
                    }
                }
            } finally {
                waker.blocked = null;
                timer.delete();
                timer.exit(locked);
            }
        } catch (ClosedByInterruptException e) {
            Thread.interrupted();
            throw new InterruptedException("interrupted while waiting for the lock");
        } catch (IOException e) {
            throw new IllegalStateException(e); // not thrown: only an interrupt closes the timer
        }
        return locked ? LOCKED : error != 0 ? error : ENDED;
    }

    /** A POSIX timer that signals one thread; the JDK's interrupt hook re-arms it to fire at once. */
    static final class Timer extends AbstractInterruptibleChannel {
        private final int id;
        private final Object guard = new Object();
        /** Set when the wait has ended; guarded by {@link #guard}. */
        private boolean deleted;

        private Timer(int id) {
            this.id = id;
        }

        static Timer create() {
            long tid = LibcSignals.syscall(LibcSignals.SYS_GETTID, 0, null, null, 0);
            byte[] event = new byte[LibcSignals.SIGEVENT_SIZE];
            putInt(event, 8, SIGNAL);
            putInt(event, 12, LibcSignals.SIGEV_THREAD_ID);
            putInt(event, 16, (int) tid);
            long[] id = new long[1];
            if (LibcSignals.syscall(LibcSignals.SYS_TIMER_CREATE, LibcSignals.CLOCK_MONOTONIC, event, id, 0) != 0) {
                log.debug("timer_create failed ({}): waiting through inotify", Errno.describe(Errno.last()));
                return null;
            }
            return new Timer((int) id[0]);
        }

        void enter() {
            begin();
        }

        void exit(boolean completed) throws IOException {
            end(completed);
        }

        /** Arms the timer to fire in {@code nanos}, then every millisecond. */
        void arm(long nanos) {
            synchronized (guard) {
                if (!deleted) {
                    settime(Math.max(1, nanos));
                }
            }
        }

        /** Makes the waiting thread's flock(2) return now: a wake-up or an interrupt. */
        void fire() {
            arm(1);
        }

        private void settime(long nanos) {
            // struct itimerspec: interval (seconds, nanoseconds), then the first expiry
            long[] spec = {0, REPEAT_NANOS, nanos / 1_000_000_000L, nanos % 1_000_000_000L};
            LibcSignals.syscall(LibcSignals.SYS_TIMER_SETTIME, id, null, spec, 0);
        }

        void delete() {
            synchronized (guard) {
                if (!deleted) {
                    deleted = true;
                    LibcSignals.syscall(LibcSignals.SYS_TIMER_DELETE, id, null, null, 0);
                }
            }
        }

        @Override
        protected void implCloseChannel() {
            fire(); // Thread.interrupt() of the waiting thread
        }

        private static void putInt(byte[] b, int off, int v) {
            b[off] = (byte) v;
            b[off + 1] = (byte) (v >>> 8);
            b[off + 2] = (byte) (v >>> 16);
            b[off + 3] = (byte) (v >>> 24);
        }
    }
}
