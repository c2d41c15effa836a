package dev.interlock.file.internal;

/**
 * Internal API of Interlock (not for applications; may change in any release): what a thread
 * needs to sleep in a blocking system call and still be woken on time ({@link KernelWait}): its
 * own POSIX timer, which sends it a signal, and a look at how a signal is handled. Bound when a
 * wait first blocks in the kernel. Conventions as in {@link LibcFiles}.
 *
 * <p>The timer calls go through syscall(2), with the kernel's own structures: glibc wraps them in
 * librt before 2.34 and with a timer_t of its own. The system call numbers are those of x86-64
 * and of asm-generic (aarch64, riscv64, loongarch64); elsewhere {@link #SYS_GETTID} is -1 and
 * {@link KernelWait} is not used.
 */
public final class LibcSignals {
    private static final Natives.Signals N = Libc.NATIVES.signals();

    private LibcSignals() {}

    private static final String ARCH = System.getProperty("os.arch", "");
    private static final boolean X86_64 = ARCH.equals("amd64") || ARCH.equals("x86_64");
    private static final boolean GENERIC = ARCH.equals("aarch64")
            || ARCH.equals("arm64")
            || ARCH.startsWith("riscv64")
            || ARCH.startsWith("loongarch64");

    public static final long SYS_GETTID = X86_64 ? 186 : GENERIC ? 178 : -1;
    public static final long SYS_TIMER_CREATE = X86_64 ? 222 : GENERIC ? 107 : -1;
    public static final long SYS_TIMER_SETTIME = X86_64 ? 223 : GENERIC ? 110 : -1;
    public static final long SYS_TIMER_DELETE = X86_64 ? 226 : GENERIC ? 111 : -1;

    public static final int CLOCK_MONOTONIC = 1;
    /** sigev_notify: the signal goes to the thread {@code sigev_notify_thread_id}. */
    public static final int SIGEV_THREAD_ID = 4;
    /** struct sigevent: 64 bytes; value at 0, signo at 8, notify at 12, thread id at 16. */
    public static final int SIGEVENT_SIZE = 64;
    /** glibc's struct sigaction on 64-bit Linux: handler at 0, mask (128 bytes) at 8, flags at 136, restorer at 144. */
    public static final int SIGACTION_SIZE = 152;

    public static final int SIGACTION_FLAGS_OFFSET = 136;
    public static final int SA_RESTART = 0x10000000;

    public static long syscall(long number, long a, byte[] b, long[] c, long d) {
        return N.syscall(number, a, b, c, d);
    }

    public static int sigaction(int signum, byte[] act, byte[] oldact) {
        return N.sigaction(signum, act, oldact);
    }
}
