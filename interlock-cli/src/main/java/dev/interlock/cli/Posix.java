package dev.interlock.cli;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The few libc calls {@code interlock run} and {@code update} need. Each is looked up on first use
 * and called through {@link Function}: registering them all up front ({@code Native.register})
 * costs tens of milliseconds of start-up, and most runs use only a dozen of them. Loaded only by
 * {@code run} and {@code update}.
 */
final class Posix {
    private static final NativeLibrary LIBC = NativeLibrary.getInstance(Platform.C_LIBRARY_NAME);
    private static final Map<String, Function> FUNCTIONS = new ConcurrentHashMap<>();

    private Posix() {}

    // <spawn.h>; the same values on Linux and the BSDs.
    static final short POSIX_SPAWN_SETPGROUP = 0x02;
    static final short POSIX_SPAWN_SETSIGDEF = 0x04;
    static final short POSIX_SPAWN_SETSIGMASK = 0x08;
    // <sys/wait.h>
    static final int WUNTRACED = 2;
    static final int WEXITED = 4;
    static final int WNOWAIT = 0x01000000;
    static final int P_PID = 1;
    static final int CLD_EXITED = 1;
    /** siginfo_t: 128 bytes; si_code at 8; for SIGCHLD si_status at 24 (the same on x86-64 and aarch64). */
    static final int SIGINFO_SIZE = 128;
    static final int SI_CODE = 8;
    static final int SI_STATUS = 24;
    static final int SIGKILL = 9;
    // <errno.h> (Linux)
    static final int EINTR = 4;
    static final int ECHILD = 10;
    static final int ENOENT = 2;
    static final int EACCES = 13;
    static final int ENOEXEC = 8;
    static final int EPERM = 1;
    // <fcntl.h> (Linux)
    static final int O_CLOEXEC = 02000000;
    // <fcntl.h> for update's descriptor-relative file handling. asm-generic values, which x86-64
    // shares; arm and arm64 (arch/arm64/include/uapi/asm/fcntl.h) swap O_DIRECTORY and O_NOFOLLOW
    // with O_DIRECT and O_LARGEFILE.
    static final int O_RDONLY = 0;
    static final int O_WRONLY = 1;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_NOCTTY = 0400;
    static final int O_NONBLOCK = 04000;
    static final int O_DIRECTORY = Platform.isARM() ? 040000 : 0200000;
    static final int O_NOFOLLOW = Platform.isARM() ? 0100000 : 0400000;
    static final int AT_FDCWD = -100;
    static final int AT_SYMLINK_NOFOLLOW = 0x100;
    static final int AT_EMPTY_PATH = 0x1000;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int F_DUPFD_CLOEXEC = 1030;
    /** statx(2) mask: type, mode, nlink, uid, gid, times, ino, size, blocks. */
    static final int STATX_BASIC_STATS = 0x7ff;
    // more <errno.h> (Linux, every architecture)
    static final int ENXIO = 6;
    static final int EEXIST = 17;
    static final int ENOTDIR = 20;
    static final int ENAMETOOLONG = 36;
    static final int ELOOP = 40;
    /** (void (*)(int)) 1 */
    static final Pointer SIG_IGN = Pointer.createConstant(1);
    /** Generous room for the opaque posix_spawnattr_t (336 bytes on glibc x86-64) and friends. */
    static final int OPAQUE_SIZE = 1024;

    private static Function fn(String name) {
        Function f = FUNCTIONS.get(name);
        if (f == null) {
            f = LIBC.getFunction(name);
            FUNCTIONS.put(name, f);
        }
        return f;
    }

    private static int call(String name, Object... args) {
        return fn(name).invokeInt(args);
    }

    static int posix_spawnp(int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp) {
        return call("posix_spawnp", pid, file, fileActions, attr, argv, envp);
    }

    static int posix_spawnattr_init(Pointer attr) {
        return call("posix_spawnattr_init", attr);
    }

    static int posix_spawnattr_destroy(Pointer attr) {
        return call("posix_spawnattr_destroy", attr);
    }

    static int posix_spawnattr_setflags(Pointer attr, short flags) {
        return call("posix_spawnattr_setflags", attr, flags);
    }

    static int posix_spawnattr_setpgroup(Pointer attr, int pgroup) {
        return call("posix_spawnattr_setpgroup", attr, pgroup);
    }

    static int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask) {
        return call("posix_spawnattr_setsigmask", attr, sigmask);
    }

    static int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault) {
        return call("posix_spawnattr_setsigdefault", attr, sigdefault);
    }

    static int posix_spawn_file_actions_init(Pointer fileActions) {
        return call("posix_spawn_file_actions_init", fileActions);
    }

    static int posix_spawn_file_actions_destroy(Pointer fileActions) {
        return call("posix_spawn_file_actions_destroy", fileActions);
    }

    static int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd) {
        return call("posix_spawn_file_actions_adddup2", fileActions, fd, newfd);
    }

    static int sigemptyset(Pointer set) {
        return call("sigemptyset", set);
    }

    static int sigfillset(Pointer set) {
        return call("sigfillset", set);
    }

    static int sigdelset(Pointer set, int signo) {
        return call("sigdelset", set, signo);
    }

    static int waitpid(int pid, int[] status, int options) {
        return call("waitpid", pid, status, options);
    }

    static int waitid(int idtype, int id, Pointer infop, int options) {
        return call("waitid", idtype, id, infop, options);
    }

    static int kill(int pid, int sig) {
        return call("kill", pid, sig);
    }

    static Pointer signal(int signum, Pointer handler) {
        return fn("signal").invokePointer(new Object[] {signum, handler});
    }

    static int isatty(int fd) {
        return call("isatty", fd);
    }

    static int tcgetpgrp(int fd) {
        return call("tcgetpgrp", fd);
    }

    static int tcsetpgrp(int fd, int pgrp) {
        return call("tcsetpgrp", fd, pgrp);
    }

    static int getpgrp() {
        return call("getpgrp");
    }

    static int getpid() {
        return call("getpid");
    }

    static int pipe2(int[] fds, int flags) {
        return call("pipe2", fds, flags);
    }

    static long write(int fd, byte[] buf, long count) {
        return fn("write").invokeLong(new Object[] {fd, buf, count});
    }

    static int close(int fd) {
        return call("close", fd);
    }

    static String strerror(int errnum) {
        return fn("strerror").invokeString(new Object[] {errnum}, false);
    }

    // Descriptor-relative file calls (used by update). Paths are NUL-terminated bytes (see cpath).

    static int openat(int dirfd, byte[] path, int flags, int mode) {
        return call("openat", dirfd, path, flags, mode);
    }

    /** statx(2) into {@code buf} (at least 256 bytes); its layout is the same on every architecture. */
    static int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) {
        return call("statx", dirfd, path, flags, mask, buf);
    }

    static int fchown(int fd, int uid, int gid) {
        return call("fchown", fd, uid, gid);
    }

    static int fchmod(int fd, int mode) {
        return call("fchmod", fd, mode);
    }

    static int fsync(int fd) {
        return call("fsync", fd);
    }

    static int fcntl(int fd, int cmd, int arg) {
        return call("fcntl", fd, cmd, arg);
    }

    static int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
        return call("renameat", olddirfd, oldpath, newdirfd, newpath);
    }

    static int unlinkat(int dirfd, byte[] path, int flags) {
        return call("unlinkat", dirfd, path, flags);
    }

    static long readlinkat(int dirfd, byte[] path, byte[] buf, long size) {
        return fn("readlinkat").invokeLong(new Object[] {dirfd, path, buf, size});
    }

    /**
     * getdents64(2): {@code struct linux_dirent64} records, the same on every architecture. glibc
     * has a wrapper since 2.30; before that, the system call itself (x86-64: 217, arm64: 61).
     */
    static long getdents64(int fd, byte[] buf, long size) {
        Function f;
        try {
            f = fn("getdents64");
        } catch (UnsatisfiedLinkError e) {
            long nr = Platform.isIntel() && Platform.is64Bit() ? 217 : Platform.isARM() && Platform.is64Bit() ? 61 : -1;
            if (nr < 0) {
                throw e;
            }
            return fn("syscall").invokeLong(new Object[] {nr, (long) fd, buf, size});
        }
        return f.invokeLong(new Object[] {fd, buf, size});
    }

    /** {@code bytes} with a terminating NUL, for the path arguments above. */
    static byte[] cpath(byte[] bytes) {
        byte[] c = new byte[bytes.length + 1];
        System.arraycopy(bytes, 0, c, 0, bytes.length);
        return c;
    }

    /**
     * {@code posix_spawn_file_actions_addclosefrom_np} (glibc 2.34+): closes every descriptor
     * from {@code lowfd} up in the child. Returns false if this libc lacks it.
     */
    static boolean addCloseFrom(Pointer fileActions, int lowfd) {
        Function f;
        try {
            f = fn("posix_spawn_file_actions_addclosefrom_np");
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
