package dev.interlock.file.internal;

import com.sun.jna.Pointer;

/**
 * The native functions of this package, one implementation per way of calling C: {@link JnaNatives}
 * (JNA, every JDK) and {@code FfmNatives} (the Foreign Function &amp; Memory API, JDK 22+, compiled
 * into {@code META-INF/versions/22} of a multi-release jar when the build has a JDK 22+ compiler).
 * {@link Libc#NATIVES} is the one chosen for the process; {@link LibcFiles}, {@link LibcProcesses},
 * {@link LibcEvents} and {@link Errno} call it, so their public static methods do not change with
 * the path.
 *
 * <p><b>Adding a function</b>: a method here (in the group of the class that publishes it), its
 * JNA declaration in {@link JnaNatives} (a {@code native} method for a registered group, a
 * {@code call} for {@link Processes}), its FFM binding in {@code FfmNatives} (the function's
 * address, one line, and a method passing its arguments as integers: up to six integer or
 * pointer arguments, an integer or pointer result; anything else needs a descriptor of its own),
 * and the public static method of the {@code Libc*} class that calls it. {@code NativesParityTest}
 * fails if one of the four is missing. The conventions are those of {@link LibcFiles}: what the
 * C function returns, errno in {@link #errno()}.
 *
 * <p>The groups are bound separately, when their {@code Libc*} class is first used, so that a
 * process pays only for what it calls.
 */
interface Natives {
    /** "jna", "jna-call" or "ffm": which path this is, for tests and diagnostics. */
    String name();

    /** The error number left by this thread's last native call through this path. */
    int errno();

    /** Sets what {@link #errno()} returns (to restore it after a cleanup call). */
    void errno(int value);

    /** strerror(3), or null if it cannot be called. */
    String strerror(int errnum);

    Files files();

    Processes processes();

    Events events();

    Signals signals();

    /** What {@link LibcFiles} publishes. */
    interface Files {
        int openat(int dirfd, byte[] path, int flags, int mode);

        int close(int fd);

        long read(int fd, byte[] buf, long count);

        long write(int fd, byte[] buf, long count);

        long pread(int fd, byte[] buf, long count, long offset);

        long pwrite(int fd, byte[] buf, long count, long offset);

        int ftruncate(int fd, long length);

        int fsync(int fd);

        int fcntl(int fd, int cmd, int arg);

        /** fcntl(2) with a {@code struct flock} ({@link LibcFiles#F_OFD_SETLK}, {@link LibcFiles#F_OFD_GETLK}), read back after the call. */
        int fcntl(int fd, int cmd, byte[] lock);

        int flock(int fd, int operation);

        int fchmod(int fd, int mode);

        int fchmodat(int dirfd, byte[] path, int mode, int flags);

        int fchown(int fd, int uid, int gid);

        int faccessat(int dirfd, byte[] path, int mode, int flags);

        int mkdirat(int dirfd, byte[] path, int mode);

        int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath);

        int unlinkat(int dirfd, byte[] path, int flags);

        int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags);

        long readlinkat(int dirfd, byte[] path, byte[] buf, long size);

        int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf);

        int fstatfs(int fd, byte[] buf);

        int geteuid();

        int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags);

        long fgetxattr(int fd, byte[] name, byte[] value, long size);

        /** syscall(SYS_getdents64, fd, buf, count) into native memory. */
        long getdents64(int fd, Pointer buf, long count);

        /**
         * getdents64 into this thread's buffer of {@link LibcFiles#DENTS_SIZE} bytes, copied to
         * {@code into} (at least that long): one copy of what was read, parsed in Java.
         */
        long getdents64(int fd, byte[] into);
    }

    /** What {@link LibcProcesses} publishes. */
    interface Processes {
        int posix_spawnp(int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp);

        int posix_spawnattr_init(Pointer attr);

        int posix_spawnattr_destroy(Pointer attr);

        int posix_spawnattr_setflags(Pointer attr, short flags);

        int posix_spawnattr_setpgroup(Pointer attr, int pgroup);

        int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask);

        int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault);

        int posix_spawn_file_actions_init(Pointer fileActions);

        int posix_spawn_file_actions_destroy(Pointer fileActions);

        int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd);

        /** posix_spawn_file_actions_addclosefrom_np (glibc 2.34+); false if this libc lacks it or it fails. */
        boolean addCloseFrom(Pointer fileActions, int lowfd);

        int sigemptyset(Pointer set);

        int sigfillset(Pointer set);

        int sigdelset(Pointer set, int signo);

        int waitpid(int pid, int[] status, int options);

        int waitid(int idtype, int id, Pointer infop, int options);

        int kill(int pid, int sig);

        Pointer signal(int signum, Pointer handler);

        int isatty(int fd);

        int tcgetpgrp(int fd);

        int tcsetpgrp(int fd, int pgrp);

        int getpgrp();

        int getpid();

        int pipe2(int[] fds, int flags);

        Pointer environ();
    }

    /** What {@link LibcEvents} publishes. */
    interface Events {
        int inotify_init1(int flags);

        int inotify_add_watch(int fd, byte[] path, int mask);

        int inotify_rm_watch(int fd, int wd);

        int poll(byte[] pollfds, long nfds, int timeoutMs);

        int eventfd(int initval, int flags);
    }

    /** What {@link LibcSignals} publishes. */
    interface Signals {
        /**
         * syscall(2) with an integer, two arrays (null passes NULL) and an integer: the calls of a
         * thread's own POSIX timer (gettid, timer_create, timer_settime, timer_delete), which glibc
         * wraps differently (librt before 2.34, its own timer_t).
         */
        long syscall(long number, long a, byte[] b, long[] c, long d);

        /** sigaction(2), glibc's struct (handler, mask, flags, restorer). */
        int sigaction(int signum, byte[] act, byte[] oldact);
    }
}
