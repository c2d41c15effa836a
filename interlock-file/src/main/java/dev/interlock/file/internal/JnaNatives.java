package dev.interlock.file.internal;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The native functions through JNA, on every JDK (the only path on JDK 17–21): direct mapping
 * (the fastest JNA call) for the files and inotify groups, registered when the group is first
 * used, and a {@link Function} looked up on first call for the process group, whose functions a
 * {@code run} calls once or twice each (registering costs start-up time per function). JNA keeps
 * errno per thread after every call.
 */
final class JnaNatives implements Natives {
    private final boolean calls;

    JnaNatives(boolean calls) {
        this.calls = calls;
    }

    @Override
    public String name() {
        return calls ? "jna-call" : "jna";
    }

    @Override
    public int errno() {
        return Native.getLastError();
    }

    @Override
    public void errno(int value) {
        Native.setLastError(value);
    }

    @Override
    public String strerror(int errnum) {
        try {
            return function("strerror").invokeString(new Object[] {errnum}, false);
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            return null;
        }
    }

    @Override
    public Natives.Files files() {
        return calls ? new CalledFiles() : new Files();
    }

    @Override
    public Natives.Processes processes() {
        return new Processes();
    }

    @Override
    public Natives.Events events() {
        return new Events();
    }

    @Override
    public Natives.Signals signals() {
        return new Signals();
    }

    private static volatile NativeLibrary library;
    /** Why JNA or the C library could not be loaded, once that was tried; thrown again (a copy) at every later call. */
    private static volatile UnsatisfiedLinkError failure;

    /** The C library; throws UnsatisfiedLinkError with a clear message where it cannot be used. */
    static NativeLibrary library() {
        NativeLibrary l = library;
        if (l == null) {
            if (Libc.UNSUPPORTED != null) {
                throw new UnsatisfiedLinkError(Libc.UNSUPPORTED);
            }
            UnsatisfiedLinkError f = failure;
            if (f == null) {
                try {
                    l = open();
                    library = l;
                    return l;
                } catch (LinkageError e) {
                    f = cannotLoad(e);
                    failure = f;
                }
            }
            UnsatisfiedLinkError again = new UnsatisfiedLinkError(f.getMessage());
            again.initCause(f.getCause());
            throw again;
        }
        return l;
    }

    /**
     * The first failure says why (JNA's class initialiser throws it once; every later use of the
     * class is a bare "Could not initialize class"): keep its message, with what to do about it.
     */
    private static UnsatisfiedLinkError cannotLoad(LinkageError e) {
        String why = e.getMessage() == null ? e.toString() : e.getMessage();
        UnsatisfiedLinkError u = new UnsatisfiedLinkError("cannot call the C library through JNA: " + why
                + " (JNA loads its native part from jna.boot.library.path, or unpacks it into jna.tmpdir or"
                + " java.io.tmpdir, which must then be writable and not mounted noexec)");
        u.initCause(e);
        return u;
    }

    /**
     * glibc's C library by its soname first: JNA's name for it, "c", makes it try "libc.so" (a
     * linker script that dlopen refuses, when the dev package is installed at all) and then run
     * {@code ldconfig -p} in a child process to find the real file, which cost every start a fork
     * and an exec. Other C libraries (musl) are found by that search as before. JNA itself is
     * loaded first, outside that retry: its own failure must not be taken for a missing soname.
     */
    private static NativeLibrary open() {
        if (Native.POINTER_SIZE <= 0) {
            throw new UnsatisfiedLinkError("JNA did not load");
        }
        try {
            return NativeLibrary.getInstance("libc.so.6");
        } catch (UnsatisfiedLinkError e) {
            return NativeLibrary.getInstance(Platform.C_LIBRARY_NAME);
        }
    }

    private static final ConcurrentHashMap<String, Function> FUNCTIONS = new ConcurrentHashMap<>();

    /**
     * A function bound on first use (a symbol lookup, no registration): for what is called rarely or
     * only by some commands, so that nobody pays at start-up for what it does not call, and for
     * functions that older C libraries lack (the caller catches UnsatisfiedLinkError).
     */
    static Function function(String name) {
        Function f = FUNCTIONS.get(name);
        if (f == null) {
            f = library().getFunction(name);
            FUNCTIONS.put(name, f);
        }
        return f;
    }

    /** Direct mapping: every native method of this class is registered at once, when it is first used. */
    static final class Files implements Natives.Files {
        static {
            Native.register(Files.class, library());
        }

        @Override
        public native int openat(int dirfd, byte[] path, int flags, int mode);

        @Override
        public native int close(int fd);

        @Override
        public native long read(int fd, byte[] buf, long count);

        @Override
        public native long write(int fd, byte[] buf, long count);

        @Override
        public native long pread(int fd, byte[] buf, long count, long offset);

        @Override
        public native long pwrite(int fd, byte[] buf, long count, long offset);

        @Override
        public native int ftruncate(int fd, long length);

        @Override
        public native int fsync(int fd);

        @Override
        public native int fcntl(int fd, int cmd, int arg);

        @Override
        public native int fcntl(int fd, int cmd, byte[] lock);

        @Override
        public native int flock(int fd, int operation);

        @Override
        public native int fchmod(int fd, int mode);

        @Override
        public native int fchmodat(int dirfd, byte[] path, int mode, int flags);

        @Override
        public native int fchown(int fd, int uid, int gid);

        @Override
        public native int faccessat(int dirfd, byte[] path, int mode, int flags);

        @Override
        public native int mkdirat(int dirfd, byte[] path, int mode);

        @Override
        public native int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath);

        @Override
        public native int unlinkat(int dirfd, byte[] path, int flags);

        @Override
        public native int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags);

        @Override
        public native long readlinkat(int dirfd, byte[] path, byte[] buf, long size);

        @Override
        public native int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf);

        @Override
        public native int fstatfs(int fd, byte[] buf);

        @Override
        public native int geteuid();

        @Override
        public native int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags);

        @Override
        public native long fgetxattr(int fd, byte[] name, byte[] value, long size);

        /**
         * syscall(2), for the one system call glibc wrapped late: getdents64 (glibc 2.30; RHEL 8 has
         * 2.28). Declared with fixed arguments; on x86-64 and aarch64 a variadic callee reads them the same.
         */
        private native long syscall(long number, long a, Pointer b, long c);

        @Override
        public long getdents64(int fd, Pointer buf, long count) {
            return syscall(Libc.SYS_GETDENTS64, fd, buf, count);
        }

        private static final ThreadLocal<Memory> DENTS =
                ThreadLocal.withInitial(() -> new Memory(LibcFiles.DENTS_SIZE));

        @Override
        public long getdents64(int fd, byte[] into) {
            Memory buf = DENTS.get();
            long n = syscall(Libc.SYS_GETDENTS64, fd, buf, buf.size());
            if (n > 0) {
                buf.read(0, into, 0, (int) n);
            }
            return n;
        }
    }

    /**
     * The files group without registration: each function looked up on first call and called
     * through {@link Function}, as {@link Processes} is. A call costs a few microseconds more than
     * a registered one, but nothing is paid up front: registering any group makes JNA build its
     * type descriptions (thirteen structures read by reflection, about 25 ms of a short command's
     * start on this kind of machine), which a command that calls a dozen functions once each
     * does not earn back. For short-lived processes ({@code -Dinterlock.natives=jna-call}, as
     * the command-line tool's launcher sets it); a long-lived one keeps {@link Files}.
     */
    static final class CalledFiles implements Natives.Files {
        private static int call(String name, Object... args) {
            return function(name).invokeInt(args);
        }

        private static long callLong(String name, Object... args) {
            return function(name).invokeLong(args);
        }

        @Override
        public int openat(int dirfd, byte[] path, int flags, int mode) {
            return call("openat", dirfd, path, flags, mode);
        }

        @Override
        public int close(int fd) {
            return call("close", fd);
        }

        @Override
        public long read(int fd, byte[] buf, long count) {
            return callLong("read", fd, buf, count);
        }

        @Override
        public long write(int fd, byte[] buf, long count) {
            return callLong("write", fd, buf, count);
        }

        @Override
        public long pread(int fd, byte[] buf, long count, long offset) {
            return callLong("pread", fd, buf, count, offset);
        }

        @Override
        public long pwrite(int fd, byte[] buf, long count, long offset) {
            return callLong("pwrite", fd, buf, count, offset);
        }

        @Override
        public int ftruncate(int fd, long length) {
            return call("ftruncate", fd, length);
        }

        @Override
        public int fsync(int fd) {
            return call("fsync", fd);
        }

        @Override
        public int fcntl(int fd, int cmd, int arg) {
            return call("fcntl", fd, cmd, arg);
        }

        @Override
        public int fcntl(int fd, int cmd, byte[] lock) {
            return call("fcntl", fd, cmd, lock);
        }

        @Override
        public int flock(int fd, int operation) {
            return call("flock", fd, operation);
        }

        @Override
        public int fchmod(int fd, int mode) {
            return call("fchmod", fd, mode);
        }

        @Override
        public int fchmodat(int dirfd, byte[] path, int mode, int flags) {
            return call("fchmodat", dirfd, path, mode, flags);
        }

        @Override
        public int fchown(int fd, int uid, int gid) {
            return call("fchown", fd, uid, gid);
        }

        @Override
        public int faccessat(int dirfd, byte[] path, int mode, int flags) {
            return call("faccessat", dirfd, path, mode, flags);
        }

        @Override
        public int mkdirat(int dirfd, byte[] path, int mode) {
            return call("mkdirat", dirfd, path, mode);
        }

        @Override
        public int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
            return call("renameat", olddirfd, oldpath, newdirfd, newpath);
        }

        @Override
        public int unlinkat(int dirfd, byte[] path, int flags) {
            return call("unlinkat", dirfd, path, flags);
        }

        @Override
        public int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags) {
            return call("linkat", olddirfd, oldpath, newdirfd, newpath, flags);
        }

        @Override
        public long readlinkat(int dirfd, byte[] path, byte[] buf, long size) {
            return callLong("readlinkat", dirfd, path, buf, size);
        }

        @Override
        public int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) {
            return call("statx", dirfd, path, flags, mask, buf);
        }

        @Override
        public int fstatfs(int fd, byte[] buf) {
            return call("fstatfs", fd, buf);
        }

        @Override
        public int geteuid() {
            return call("geteuid");
        }

        @Override
        public int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags) {
            return call("fsetxattr", fd, name, value, size, flags);
        }

        @Override
        public long fgetxattr(int fd, byte[] name, byte[] value, long size) {
            return callLong("fgetxattr", fd, name, value, size);
        }

        @Override
        public long getdents64(int fd, Pointer buf, long count) {
            return callLong("syscall", Libc.SYS_GETDENTS64, (long) fd, buf, count);
        }

        @Override
        public long getdents64(int fd, byte[] into) {
            return callLong("syscall", Libc.SYS_GETDENTS64, (long) fd, into, (long) LibcFiles.DENTS_SIZE);
        }
    }

    /** Direct mapping, registered when the inotify watcher (or a poll) first needs it. */
    static final class Events implements Natives.Events {
        static {
            Native.register(Events.class, library());
        }

        @Override
        public native int inotify_init1(int flags);

        @Override
        public native int inotify_add_watch(int fd, byte[] path, int mask);

        @Override
        public native int inotify_rm_watch(int fd, int wd);

        @Override
        public native int poll(byte[] pollfds, long nfds, int timeoutMs);

        @Override
        public native int eventfd(int initval, int flags);
    }

    /** Direct mapping, registered when a wait first blocks in the kernel ({@link KernelWait}). */
    static final class Signals implements Natives.Signals {
        static {
            Native.register(Signals.class, library());
        }

        @Override
        public native long syscall(long number, long a, byte[] b, long[] c, long d);

        @Override
        public native int sigaction(int signum, byte[] act, byte[] oldact);
    }

    /** Looked up on first call, called through {@link Function}: nothing registered up front. */
    static final class Processes implements Natives.Processes {
        private static int call(String name, Object... args) {
            return function(name).invokeInt(args);
        }

        @Override
        public int posix_spawnp(
                int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp) {
            return call("posix_spawnp", pid, file, fileActions, attr, argv, envp);
        }

        @Override
        public int posix_spawnattr_init(Pointer attr) {
            return call("posix_spawnattr_init", attr);
        }

        @Override
        public int posix_spawnattr_destroy(Pointer attr) {
            return call("posix_spawnattr_destroy", attr);
        }

        @Override
        public int posix_spawnattr_setflags(Pointer attr, short flags) {
            return call("posix_spawnattr_setflags", attr, flags);
        }

        @Override
        public int posix_spawnattr_setpgroup(Pointer attr, int pgroup) {
            return call("posix_spawnattr_setpgroup", attr, pgroup);
        }

        @Override
        public int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask) {
            return call("posix_spawnattr_setsigmask", attr, sigmask);
        }

        @Override
        public int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault) {
            return call("posix_spawnattr_setsigdefault", attr, sigdefault);
        }

        @Override
        public int posix_spawn_file_actions_init(Pointer fileActions) {
            return call("posix_spawn_file_actions_init", fileActions);
        }

        @Override
        public int posix_spawn_file_actions_destroy(Pointer fileActions) {
            return call("posix_spawn_file_actions_destroy", fileActions);
        }

        @Override
        public int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd) {
            return call("posix_spawn_file_actions_adddup2", fileActions, fd, newfd);
        }

        @Override
        public boolean addCloseFrom(Pointer fileActions, int lowfd) {
            Function f;
            try {
                f = function("posix_spawn_file_actions_addclosefrom_np");
            } catch (UnsatisfiedLinkError e) {
                return false;
            }
            return f.invokeInt(new Object[] {fileActions, lowfd}) == 0;
        }

        @Override
        public int sigemptyset(Pointer set) {
            return call("sigemptyset", set);
        }

        @Override
        public int sigfillset(Pointer set) {
            return call("sigfillset", set);
        }

        @Override
        public int sigdelset(Pointer set, int signo) {
            return call("sigdelset", set, signo);
        }

        @Override
        public int waitpid(int pid, int[] status, int options) {
            return call("waitpid", pid, status, options);
        }

        @Override
        public int waitid(int idtype, int id, Pointer infop, int options) {
            return call("waitid", idtype, id, infop, options);
        }

        @Override
        public int kill(int pid, int sig) {
            return call("kill", pid, sig);
        }

        @Override
        public Pointer signal(int signum, Pointer handler) {
            return function("signal").invokePointer(new Object[] {signum, handler});
        }

        @Override
        public int isatty(int fd) {
            return call("isatty", fd);
        }

        @Override
        public int tcgetpgrp(int fd) {
            return call("tcgetpgrp", fd);
        }

        @Override
        public int tcsetpgrp(int fd, int pgrp) {
            return call("tcsetpgrp", fd, pgrp);
        }

        @Override
        public int getpgrp() {
            return call("getpgrp");
        }

        @Override
        public int getpid() {
            return call("getpid");
        }

        @Override
        public int pipe2(int[] fds, int flags) {
            return call("pipe2", fds, flags);
        }

        @Override
        public Pointer environ() {
            return library().getGlobalVariableAddress("environ").getPointer(0);
        }
    }
}
