package dev.interlock.cli;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

/**
 * The few libc calls {@code interlock run} needs, bound with JNA direct mapping (no proxies, so
 * start-up stays cheap). Loaded only by {@code run}.
 */
final class Posix {
    private static final NativeLibrary LIBC = NativeLibrary.getInstance(Platform.C_LIBRARY_NAME);

    static {
        Native.register(Posix.class, LIBC);
    }

    private Posix() {}

    // <spawn.h>; the same values on Linux and the BSDs.
    static final short POSIX_SPAWN_SETPGROUP = 0x02;
    static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    // <sys/wait.h>
    static final int WUNTRACED = 2;
    // <errno.h> (Linux)
    static final int EINTR = 4;
    static final int ECHILD = 10;
    static final int ENOENT = 2;
    static final int EACCES = 13;
    static final int ENOEXEC = 8;
    static final int EPERM = 1;
    // <fcntl.h> (Linux)
    static final int O_CLOEXEC = 02000000;
    /** (void (*)(int)) 1 */
    static final Pointer SIG_IGN = Pointer.createConstant(1);
    /** Generous room for the opaque posix_spawnattr_t (336 bytes on glibc x86-64) and friends. */
    static final int OPAQUE_SIZE = 1024;

    static native int posix_spawnp(int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp);

    static native int posix_spawnattr_init(Pointer attr);

    static native int posix_spawnattr_destroy(Pointer attr);

    static native int posix_spawnattr_setflags(Pointer attr, short flags);

    static native int posix_spawnattr_setpgroup(Pointer attr, int pgroup);

    static native int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask);

    static native int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault);

    static native int posix_spawn_file_actions_init(Pointer fileActions);

    static native int posix_spawn_file_actions_destroy(Pointer fileActions);

    static native int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd);

    static native int sigemptyset(Pointer set);

    static native int sigfillset(Pointer set);

    static native int sigdelset(Pointer set, int signo);

    static native int waitpid(int pid, int[] status, int options);

    static native int kill(int pid, int sig);

    static native Pointer signal(int signum, Pointer handler);

    static native int isatty(int fd);

    static native int tcgetpgrp(int fd);

    static native int tcsetpgrp(int fd, int pgrp);

    static native int getpgrp();

    static native int getpid();

    static native int pipe2(int[] fds, int flags);

    static native long write(int fd, byte[] buf, long count);

    static native int close(int fd);

    static native String strerror(int errnum);

    /**
     * {@code posix_spawn_file_actions_addclosefrom_np} (glibc 2.34+): closes every descriptor
     * from {@code lowfd} up in the child. Returns false if this libc lacks it.
     */
    static boolean addCloseFrom(Pointer fileActions, int lowfd) {
        Function f;
        try {
            f = LIBC.getFunction("posix_spawn_file_actions_addclosefrom_np");
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
        return f.invokeInt(new Object[] {fileActions, lowfd}) == 0;
    }

    /** {@code environ}: the process's environment as the kernel and libc hold it (exact bytes). */
    static Pointer environ() {
        return LIBC.getGlobalVariableAddress("environ").getPointer(0);
    }

    static int errno() {
        return Native.getLastError();
    }

    /** A zeroed block for an opaque libc structure. */
    static Memory opaque() {
        Memory m = new Memory(OPAQUE_SIZE);
        m.clear();
        return m;
    }

    /** Decodes a wait status the way a shell reports it: the exit status, or 128+signal. */
    static int shellStatus(int status) {
        int sig = status & 0x7f;
        if (sig == 0) {
            return (status >> 8) & 0xff;
        }
        return ExitCodes.SIGNAL_BASE + sig;
    }

    static boolean stopped(int status) {
        return (status & 0xff) == 0x7f;
    }
}
