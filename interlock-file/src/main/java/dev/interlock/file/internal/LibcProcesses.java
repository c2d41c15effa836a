package dev.interlock.file.internal;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * Internal API of Interlock (not for applications; may change in any release): the libc calls on
 * processes, process groups, signals and terminals, for {@code interlock run} and {@code update}
 * (spawning, waiting, forwarding signals) and for the {@code dir:} backend's liveness test
 * ({@link #kill}).
 *
 * <p><b>Bound lazily.</b> Each function is looked up when first called (with JNA, called through a
 * {@code Function}, not registered up front: registering direct-mapped natives costs start-up time
 * per function, a {@code run} calls about fifteen of these once or twice each, and the backends
 * call none of them on their fast paths; with FFM, a handle made at first call; see
 * {@link Natives}). Pointers are JNA's {@link Pointer} on both paths (the FFM path passes their
 * address). The conventions are those of {@link LibcFiles}: what the C
 * function returns, errno in {@link Errno#last()} (the posix_spawn functions return their error
 * number instead, as in C).
 *
 * <p>The constants and the layout of {@code siginfo_t} are those of Linux on x86-64 and aarch64.
 */
public final class LibcProcesses {
    private LibcProcesses() {}

    // <spawn.h>; the same values on Linux and the BSDs.
    public static final short POSIX_SPAWN_SETPGROUP = 0x02;
    public static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    public static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    // <sys/wait.h>
    public static final int WUNTRACED = 2;
    public static final int WEXITED = 4;
    public static final int WNOWAIT = 0x01000000;
    public static final int P_PID = 1;
    public static final int CLD_EXITED = 1;
    /** siginfo_t: 128 bytes; si_code at 8; for SIGCHLD si_status at 24 (the same on x86-64 and aarch64). */
    public static final int SIGINFO_SIZE = 128;

    public static final int SI_CODE = 8;
    public static final int SI_STATUS = 24;
    // <signal.h>: the same numbers on x86-64 and aarch64 (asm-generic/signal.h)
    public static final int SIGKILL = 9;
    public static final int SIGTERM = 15;
    /** (void (*)(int)) 1 */
    public static final Pointer SIG_IGN = Pointer.createConstant(1);
    /** Generous room for the opaque posix_spawnattr_t (336 bytes on glibc x86-64), posix_spawn_file_actions_t and sigset_t. */
    public static final int OPAQUE_SIZE = 1024;

    private static final Natives.Processes N = Libc.NATIVES.processes();

    public static int posix_spawnp(
            int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp) {
        return N.posix_spawnp(pid, file, fileActions, attr, argv, envp);
    }

    public static int posix_spawnattr_init(Pointer attr) {
        return N.posix_spawnattr_init(attr);
    }

    public static int posix_spawnattr_destroy(Pointer attr) {
        return N.posix_spawnattr_destroy(attr);
    }

    public static int posix_spawnattr_setflags(Pointer attr, short flags) {
        return N.posix_spawnattr_setflags(attr, flags);
    }

    public static int posix_spawnattr_setpgroup(Pointer attr, int pgroup) {
        return N.posix_spawnattr_setpgroup(attr, pgroup);
    }

    public static int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask) {
        return N.posix_spawnattr_setsigmask(attr, sigmask);
    }

    public static int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault) {
        return N.posix_spawnattr_setsigdefault(attr, sigdefault);
    }

    public static int posix_spawn_file_actions_init(Pointer fileActions) {
        return N.posix_spawn_file_actions_init(fileActions);
    }

    public static int posix_spawn_file_actions_destroy(Pointer fileActions) {
        return N.posix_spawn_file_actions_destroy(fileActions);
    }

    public static int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd) {
        return N.posix_spawn_file_actions_adddup2(fileActions, fd, newfd);
    }

    /**
     * {@code posix_spawn_file_actions_addclosefrom_np} (glibc 2.34+): closes every descriptor
     * from {@code lowfd} up in the child. Returns false if this libc lacks it.
     */
    public static boolean addCloseFrom(Pointer fileActions, int lowfd) {
        return N.addCloseFrom(fileActions, lowfd);
    }

    public static int sigemptyset(Pointer set) {
        return N.sigemptyset(set);
    }

    public static int sigfillset(Pointer set) {
        return N.sigfillset(set);
    }

    public static int sigdelset(Pointer set, int signo) {
        return N.sigdelset(set, signo);
    }

    public static int waitpid(int pid, int[] status, int options) {
        return N.waitpid(pid, status, options);
    }

    public static int waitid(int idtype, int id, Pointer infop, int options) {
        return N.waitid(idtype, id, infop, options);
    }

    public static int kill(int pid, int sig) {
        return N.kill(pid, sig);
    }

    public static Pointer signal(int signum, Pointer handler) {
        return N.signal(signum, handler);
    }

    public static int isatty(int fd) {
        return N.isatty(fd);
    }

    public static int tcgetpgrp(int fd) {
        return N.tcgetpgrp(fd);
    }

    public static int tcsetpgrp(int fd, int pgrp) {
        return N.tcsetpgrp(fd, pgrp);
    }

    public static int getpgrp() {
        return N.getpgrp();
    }

    public static int getpid() {
        return N.getpid();
    }

    public static int pipe2(int[] fds, int flags) {
        return N.pipe2(fds, flags);
    }

    /** {@code environ}: the process's environment as the kernel and libc hold it (exact bytes). */
    public static Pointer environ() {
        return N.environ();
    }

    /** A zeroed block for an opaque libc structure. */
    public static Memory opaque() {
        Memory m = new Memory(OPAQUE_SIZE);
        m.clear();
        return m;
    }
}
