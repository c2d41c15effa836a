package dev.interlock.file.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import com.sun.jna.Pointer;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Optional;

/**
 * The native functions through the Foreign Function &amp; Memory API (JDK 22+): compiled by a JDK
 * 22+ compiler into {@code META-INF/versions/22} of the multi-release jar, chosen by
 * {@link Libc#select}. No native library of ours is loaded and nothing is registered: every call
 * goes through one downcall handle ({@link #CALL}, a constant to the JIT) with the address of its
 * function, looked up when its group ({@code Files}, {@code Processes}, {@code Events}) is first
 * used.
 *
 * <p><b>errno</b> is captured after every call ({@code Linker.Option.captureCallState("errno")})
 * into a segment of the calling thread, which {@link #errno()} reads: the same per-thread,
 * every-call semantics as JNA's last error.
 *
 * <p><b>Java arrays</b> are copied to and from a per-thread native buffer around the call, as JNA
 * does for its direct mapping. {@code Linker.Option.critical(true)} would pass them without a copy,
 * but a critical call keeps the thread in Java state: the whole JVM could not reach a safepoint
 * (no GC) while one blocks, and any of these calls can block (flock(2) by design; open, rename or
 * statx on a hung NFS server). Inputs are copied in; outputs are copied back only as far as the
 * call wrote (what read(2) returned; a whole struct on success); a count larger than its array
 * is cut to the array's length, where JNA would let the call write past its copy.
 *
 * <p>Pointers are JNA's {@link Pointer} in the signatures of {@link Natives.Processes}; their
 * address is passed ({@code Pointer} is plain Java: this path never loads JNA's native library
 * itself, though a caller that allocates JNA {@code Memory} does).
 *
 * <p>On JDK 22 and 23 this path is used only where native access is enabled for its module
 * ({@code Enable-Native-Access} in the command-line jar, {@code --enable-native-access}):
 * otherwise the first call would print a warning that JNA, on those JDKs, does not.
 */
final class FfmNatives implements Natives {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final long STATE_SIZE = Linker.Option.captureStateLayout().byteSize();
    private static final long ERRNO_OFFSET = errnoOffset();

    /** Where errno is in the capture segment (0 on Linux); by a loop, not a layout path (streams, at start-up). */
    private static long errnoOffset() {
        long offset = 0;
        for (MemoryLayout m : Linker.Option.captureStateLayout().memberLayouts()) {
            if (m.name().orElse("").equals("errno")) {
                return offset;
            }
            offset += m.byteSize();
        }
        throw new UnsupportedOperationException("this JDK captures no errno");
    }

    /**
     * The one downcall shape: (function, errno segment, six integer-class arguments) returning an
     * integer-class value. Each distinct {@code FunctionDescriptor} costs a generated stub and
     * its classes at first use (measured: ~9 ms of CPU each on JDK 25 with C1 only, and an AOT
     * cache does not keep them), which for the ~30 functions of a {@code run} outweighed JNA's whole
     * start. One shape is one stub. It is correct for these functions because every argument and
     * result is an integer or a pointer: on x86-64, aarch64 and riscv64 the first six such
     * arguments travel in 64-bit registers (on s390x the sixth on the stack), a callee reads only
     * those it declares, and a 32-bit argument is its register's low half (passed sign-extended,
     * or zero-extended where C declares it unsigned, as ppc64 and s390x expect). An {@code int}
     * result is the low half of the register: callers cast. Pointers are passed as addresses.
     * Variadic callees (fcntl, syscall) are called as if their arguments were fixed, which is what
     * JNA's declarations of them did too.
     */
    private static final MethodHandle CALL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG), ERRNO);

    static {
        if (Runtime.version().feature() < 24 && !FfmNatives.class.getModule().isNativeAccessEnabled()) {
            throw new UnsupportedOperationException(
                    "native access is not enabled: JNA, which does not warn on this JDK");
        }
    }

    private FfmNatives() {}

    @Override
    public String name() {
        return "ffm";
    }

    @Override
    public int errno() {
        return SCRATCH.get().state.get(JAVA_INT, ERRNO_OFFSET);
    }

    @Override
    public void errno(int value) {
        SCRATCH.get().state.set(JAVA_INT, ERRNO_OFFSET, value);
    }

    /** strerror(3), its errno captured aside: describing an error must not change {@link #errno()}. */
    @Override
    public String strerror(int errnum) {
        try {
            long text = (long) CALL.invokeExact(Strerror.F, SCRATCH.get().aside, (long) errnum, 0L, 0L, 0L, 0L, 0L);
            return text == 0
                    ? null
                    : MemorySegment.ofAddress(text)
                            .reinterpret(Integer.MAX_VALUE)
                            .getString(0, Libc.PATH_CHARSET);
        } catch (Throwable t) {
            return null;
        }
    }

    private static final class Strerror {
        static final MemorySegment F = symbol("strerror");
    }

    @Override
    public Natives.Files files() {
        return new Files();
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

    // ------------------------------------------------------------------------------ binding

    private static Optional<MemorySegment> find(String name) {
        if (Libc.UNSUPPORTED != null) {
            throw new UnsatisfiedLinkError(Libc.UNSUPPORTED);
        }
        return LINKER.defaultLookup().find(name);
    }

    /** The address of the C library's function {@code name}; UnsatisfiedLinkError if it has none. */
    static MemorySegment symbol(String name) {
        return find(name).orElseThrow(() -> new UnsatisfiedLinkError("the C library has no function " + name));
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }

    /** Calls {@code fn} with up to six integer-class arguments (zeros after the last), errno captured for this thread. */
    private static long call(MemorySegment fn, MemorySegment state, long a, long b, long c, long d, long e, long f) {
        try {
            return (long) CALL.invokeExact(fn, state, a, b, c, d, e, f);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static long call(MemorySegment fn, long a, long b, long c, long d, long e, long f) {
        return call(fn, SCRATCH.get().state, a, b, c, d, e, f);
    }

    private static int call0(MemorySegment fn) {
        return (int) call(fn, 0, 0, 0, 0, 0, 0);
    }

    private static int call1(MemorySegment fn, long a) {
        return (int) call(fn, a, 0, 0, 0, 0, 0);
    }

    private static int call2(MemorySegment fn, long a, long b) {
        return (int) call(fn, a, b, 0, 0, 0, 0);
    }

    private static int call3(MemorySegment fn, long a, long b, long c) {
        return (int) call(fn, a, b, c, 0, 0, 0);
    }

    /** A C {@code unsigned int} (mode_t, uid_t, gid_t, id_t, flags declared unsigned): zero-extended. */
    private static long u(int value) {
        return Integer.toUnsignedLong(value);
    }

    private static long address(Pointer p) {
        return p == null ? 0 : Pointer.nativeValue(p);
    }

    private static Pointer pointer(long address) {
        return address == 0 ? null : new Pointer(address);
    }

    /** A length that fits its array: JNA passes the count as is, and a larger one would let C write past the copy. */
    private static long fit(long count, byte[] a) {
        return a == null ? count : count < 0 || count > a.length ? a.length : count;
    }

    // ------------------------------------------------------------------------------ scratch

    /**
     * Per thread: the errno capture segment, another for calls whose errno must not show
     * ({@link #strerror}), and a buffer for arrays, grown as needed (native memory of an automatic
     * arena, freed once the thread's Scratch is unreachable). Reachable from its thread for as long
     * as a call uses it, so addresses into it stay valid during the call.
     */
    private static final class Scratch {
        final MemorySegment state;
        final MemorySegment aside;
        private MemorySegment buf;

        Scratch() {
            Arena arena = Arena.ofAuto();
            state = arena.allocate(STATE_SIZE, 8);
            aside = arena.allocate(STATE_SIZE, 8);
            buf = arena.allocate(4096, 8);
        }

        /** The buffer's address, with at least {@code size} bytes; what it held is lost if it grows. */
        long reserve(long size) {
            if (buf.byteSize() < size) {
                buf = Arena.ofAuto().allocate(Math.max(size, 2 * buf.byteSize()), 8);
            }
            return buf.address();
        }

        /** The address of {@code a} copied at {@code off} of the buffer (reserved before), or 0 for null. */
        long put(long off, byte[] a) {
            if (a == null) {
                return 0;
            }
            MemorySegment.copy(a, 0, buf, JAVA_BYTE, off, a.length);
            return buf.address() + off;
        }

        /** One byte array in: its address. */
        long in(byte[] a) {
            reserve(a == null ? 0 : a.length);
            return put(0, a);
        }

        /** Two byte arrays in, the second at {@code second} (8-aligned): the first's address. */
        long in(byte[] a, long second, long secondSize) {
            reserve(second + secondSize);
            return put(0, a);
        }

        /** The first {@code n} bytes at {@code off} back into {@code a} (nothing if n <= 0). */
        void out(long off, byte[] a, long n) {
            if (a != null && n > 0) {
                MemorySegment.copy(buf, JAVA_BYTE, off, a, 0, (int) Math.min(n, a.length));
            }
        }

        long ints(int[] a) {
            reserve(4L * a.length);
            MemorySegment.copy(a, 0, buf, JAVA_INT, 0, a.length);
            return buf.address();
        }

        void ints(int[] a, int unused) {
            MemorySegment.copy(buf, JAVA_INT, 0, a, 0, a.length);
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = new ThreadLocal<>() {
        @Override
        protected Scratch initialValue() {
            return new Scratch();
        }
    };

    static {
        Libc.FfmSlot.instance = new FfmNatives(); // last: every static field above is set
    }

    private static long align(long n) {
        return (n + 7) & ~7L;
    }

    // ------------------------------------------------------------------------------ files

    /** Every function looked up when the group is first used (a dlsym each; nothing generated). */
    static final class Files implements Natives.Files {
        private static final MemorySegment OPENAT = symbol("openat");
        private static final MemorySegment CLOSE = symbol("close");
        private static final MemorySegment READ = symbol("read");
        private static final MemorySegment WRITE = symbol("write");
        private static final MemorySegment PREAD = symbol("pread");
        private static final MemorySegment PWRITE = symbol("pwrite");
        private static final MemorySegment FTRUNCATE = symbol("ftruncate");
        private static final MemorySegment FSYNC = symbol("fsync");
        private static final MemorySegment FCNTL = symbol("fcntl");
        private static final MemorySegment FLOCK = symbol("flock");
        private static final MemorySegment FCHMOD = symbol("fchmod");
        private static final MemorySegment FCHMODAT = symbol("fchmodat");
        private static final MemorySegment FCHOWN = symbol("fchown");
        private static final MemorySegment FACCESSAT = symbol("faccessat");
        private static final MemorySegment MKDIRAT = symbol("mkdirat");
        private static final MemorySegment RENAMEAT = symbol("renameat");
        private static final MemorySegment UNLINKAT = symbol("unlinkat");
        private static final MemorySegment LINKAT = symbol("linkat");
        private static final MemorySegment READLINKAT = symbol("readlinkat");
        private static final MemorySegment STATX = symbol("statx");
        private static final MemorySegment FSTATFS = symbol("fstatfs");
        private static final MemorySegment GETEUID = symbol("geteuid");
        private static final MemorySegment FSETXATTR = symbol("fsetxattr");
        private static final MemorySegment FGETXATTR = symbol("fgetxattr");
        /** syscall(2): glibc wrapped getdents64 late (2.30). */
        private static final MemorySegment SYSCALL = symbol("syscall");

        @Override
        public int openat(int dirfd, byte[] path, int flags, int mode) {
            return (int) call(OPENAT, dirfd, SCRATCH.get().in(path), flags, u(mode), 0, 0);
        }

        @Override
        public int close(int fd) {
            return call1(CLOSE, fd);
        }

        @Override
        public long read(int fd, byte[] buf, long count) {
            Scratch s = SCRATCH.get();
            long c = fit(count, buf);
            long n = call(READ, s.state, fd, s.reserve(c), c, 0, 0, 0);
            s.out(0, buf, n);
            return n;
        }

        @Override
        public long write(int fd, byte[] buf, long count) {
            Scratch s = SCRATCH.get();
            return call(WRITE, s.state, fd, s.in(buf), fit(count, buf), 0, 0, 0);
        }

        @Override
        public long pread(int fd, byte[] buf, long count, long offset) {
            Scratch s = SCRATCH.get();
            long c = fit(count, buf);
            long n = call(PREAD, s.state, fd, s.reserve(c), c, offset, 0, 0);
            s.out(0, buf, n);
            return n;
        }

        @Override
        public long pwrite(int fd, byte[] buf, long count, long offset) {
            Scratch s = SCRATCH.get();
            return call(PWRITE, s.state, fd, s.in(buf), fit(count, buf), offset, 0, 0);
        }

        @Override
        public int ftruncate(int fd, long length) {
            return call2(FTRUNCATE, fd, length);
        }

        @Override
        public int fsync(int fd) {
            return call1(FSYNC, fd);
        }

        @Override
        public int fcntl(int fd, int cmd, int arg) {
            return call3(FCNTL, fd, cmd, arg);
        }

        @Override
        public int fcntl(int fd, int cmd, byte[] lock) {
            Scratch s = SCRATCH.get();
            int rc = (int) call(FCNTL, s.state, fd, cmd, s.in(lock), 0, 0, 0);
            s.out(0, lock, lock.length);
            return rc;
        }

        @Override
        public int flock(int fd, int operation) {
            return call2(FLOCK, fd, operation);
        }

        @Override
        public int fchmod(int fd, int mode) {
            return call2(FCHMOD, fd, u(mode));
        }

        @Override
        public int fchmodat(int dirfd, byte[] path, int mode, int flags) {
            return (int) call(FCHMODAT, dirfd, SCRATCH.get().in(path), u(mode), flags, 0, 0);
        }

        @Override
        public int fchown(int fd, int uid, int gid) {
            return call3(FCHOWN, fd, u(uid), u(gid));
        }

        @Override
        public int faccessat(int dirfd, byte[] path, int mode, int flags) {
            return (int) call(FACCESSAT, dirfd, SCRATCH.get().in(path), mode, flags, 0, 0);
        }

        @Override
        public int mkdirat(int dirfd, byte[] path, int mode) {
            return call3(MKDIRAT, dirfd, SCRATCH.get().in(path), u(mode));
        }

        @Override
        public int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
            Scratch s = SCRATCH.get();
            long second = align(oldpath.length);
            long a = s.in(oldpath, second, newpath.length);
            return (int) call(RENAMEAT, s.state, olddirfd, a, newdirfd, s.put(second, newpath), 0, 0);
        }

        @Override
        public int unlinkat(int dirfd, byte[] path, int flags) {
            return call3(UNLINKAT, dirfd, SCRATCH.get().in(path), flags);
        }

        @Override
        public int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags) {
            Scratch s = SCRATCH.get();
            long second = align(oldpath.length);
            long a = s.in(oldpath, second, newpath.length);
            return (int) call(LINKAT, s.state, olddirfd, a, newdirfd, s.put(second, newpath), flags, 0);
        }

        @Override
        public long readlinkat(int dirfd, byte[] path, byte[] buf, long size) {
            Scratch s = SCRATCH.get();
            long second = align(path.length);
            long c = fit(size, buf);
            long p = s.in(path, second, c);
            long n = call(READLINKAT, s.state, dirfd, p, p + second, c, 0, 0);
            s.out(second, buf, n);
            return n;
        }

        @Override
        public int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) {
            Scratch s = SCRATCH.get();
            long second = align(path.length);
            long p = s.in(path, second, buf.length);
            int rc = (int) call(STATX, s.state, dirfd, p, flags, u(mask), s.put(second, buf), 0);
            s.out(second, buf, buf.length);
            return rc;
        }

        @Override
        public int fstatfs(int fd, byte[] buf) {
            Scratch s = SCRATCH.get();
            int rc = (int) call(FSTATFS, s.state, fd, s.in(buf), 0, 0, 0, 0);
            s.out(0, buf, buf.length);
            return rc;
        }

        @Override
        public int geteuid() {
            return call0(GETEUID);
        }

        @Override
        public int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags) {
            Scratch s = SCRATCH.get();
            long second = align(name.length);
            long n = s.in(name, second, value == null ? 0 : value.length);
            return (int) call(FSETXATTR, s.state, fd, n, s.put(second, value), fit(size, value), flags, 0);
        }

        @Override
        public long fgetxattr(int fd, byte[] name, byte[] value, long size) {
            Scratch s = SCRATCH.get();
            long second = align(name.length);
            long c = fit(size, value);
            long n = s.in(name, second, value == null ? 0 : c);
            long got = call(FGETXATTR, s.state, fd, n, value == null ? 0 : n + second, c, 0, 0);
            s.out(second, value, got);
            return got;
        }

        @Override
        public long getdents64(int fd, Pointer buf, long count) {
            return call(SYSCALL, Libc.SYS_GETDENTS64, fd, address(buf), count, 0, 0);
        }

        @Override
        public long getdents64(int fd, byte[] into) {
            Scratch s = SCRATCH.get();
            long c = Math.min(into.length, LibcFiles.DENTS_SIZE);
            long n = call(SYSCALL, s.state, Libc.SYS_GETDENTS64, fd, s.reserve(c), c, 0, 0);
            s.out(0, into, n);
            return n;
        }
    }

    // ------------------------------------------------------------------------------ events

    static final class Events implements Natives.Events {
        private static final MemorySegment INOTIFY_INIT1 = symbol("inotify_init1");
        private static final MemorySegment INOTIFY_ADD_WATCH = symbol("inotify_add_watch");
        private static final MemorySegment INOTIFY_RM_WATCH = symbol("inotify_rm_watch");
        private static final MemorySegment POLL = symbol("poll");
        private static final MemorySegment EVENTFD = symbol("eventfd");

        @Override
        public int inotify_init1(int flags) {
            return call1(INOTIFY_INIT1, flags);
        }

        @Override
        public int inotify_add_watch(int fd, byte[] path, int mask) {
            return call3(INOTIFY_ADD_WATCH, fd, SCRATCH.get().in(path), u(mask));
        }

        @Override
        public int inotify_rm_watch(int fd, int wd) {
            return call2(INOTIFY_RM_WATCH, fd, wd);
        }

        @Override
        public int poll(byte[] pollfds, long nfds, int timeoutMs) {
            Scratch s = SCRATCH.get();
            long n = Math.max(0, Math.min(nfds, pollfds.length / 8));
            int rc = (int) call(POLL, s.state, s.in(pollfds), n, timeoutMs, 0, 0, 0);
            s.out(0, pollfds, 8 * n);
            return rc;
        }

        @Override
        public int eventfd(int initval, int flags) {
            return call2(EVENTFD, u(initval), flags);
        }
    }

    // ------------------------------------------------------------------------------ signals

    static final class Signals implements Natives.Signals {
        private static final MemorySegment SYSCALL = symbol("syscall");
        private static final MemorySegment SIGACTION = symbol("sigaction");

        @Override
        public long syscall(long number, long a, byte[] b, long[] c, long d) {
            Scratch s = SCRATCH.get();
            long second = align(b == null ? 0 : b.length);
            long bAddr = s.in(b, second, c == null ? 0 : 8L * c.length);
            long cAddr = 0;
            if (c != null) {
                cAddr = s.reserve(second + 8L * c.length) + second;
                MemorySegment.copy(
                        c, 0, MemorySegment.ofAddress(cAddr).reinterpret(8L * c.length), JAVA_LONG, 0, c.length);
            }
            long rc = call(SYSCALL, s.state, number, a, bAddr, cAddr, d, 0);
            if (c != null) {
                MemorySegment.copy(
                        MemorySegment.ofAddress(cAddr).reinterpret(8L * c.length), JAVA_LONG, 0, c, 0, c.length);
            }
            return rc;
        }

        @Override
        public int sigaction(int signum, byte[] act, byte[] oldact) {
            Scratch s = SCRATCH.get();
            long second = align(act == null ? 0 : act.length);
            long actAddr = s.in(act, second, oldact == null ? 0 : oldact.length);
            long oldAddr = oldact == null ? 0 : s.reserve(second + oldact.length) + second;
            int rc = (int) call(SIGACTION, s.state, signum, actAddr, oldAddr, 0, 0, 0);
            if (rc == 0 && oldact != null) {
                MemorySegment.copy(
                        MemorySegment.ofAddress(oldAddr).reinterpret(oldact.length),
                        JAVA_BYTE,
                        0,
                        oldact,
                        0,
                        oldact.length);
            }
            return rc;
        }
    }

    // ------------------------------------------------------------------------------ processes

    static final class Processes implements Natives.Processes {
        private static final MemorySegment POSIX_SPAWNP = symbol("posix_spawnp");
        private static final MemorySegment SPAWNATTR_INIT = symbol("posix_spawnattr_init");
        private static final MemorySegment SPAWNATTR_DESTROY = symbol("posix_spawnattr_destroy");
        private static final MemorySegment SPAWNATTR_SETFLAGS = symbol("posix_spawnattr_setflags");
        private static final MemorySegment SPAWNATTR_SETPGROUP = symbol("posix_spawnattr_setpgroup");
        private static final MemorySegment SPAWNATTR_SETSIGMASK = symbol("posix_spawnattr_setsigmask");
        private static final MemorySegment SPAWNATTR_SETSIGDEFAULT = symbol("posix_spawnattr_setsigdefault");
        private static final MemorySegment FILE_ACTIONS_INIT = symbol("posix_spawn_file_actions_init");
        private static final MemorySegment FILE_ACTIONS_DESTROY = symbol("posix_spawn_file_actions_destroy");
        private static final MemorySegment FILE_ACTIONS_ADDDUP2 = symbol("posix_spawn_file_actions_adddup2");
        /** Null where the C library lacks it (glibc before 2.34). */
        private static final MemorySegment FILE_ACTIONS_ADDCLOSEFROM =
                find("posix_spawn_file_actions_addclosefrom_np").orElse(null);

        private static final MemorySegment SIGEMPTYSET = symbol("sigemptyset");
        private static final MemorySegment SIGFILLSET = symbol("sigfillset");
        private static final MemorySegment SIGDELSET = symbol("sigdelset");
        private static final MemorySegment WAITPID = symbol("waitpid");
        private static final MemorySegment WAITID = symbol("waitid");
        private static final MemorySegment KILL = symbol("kill");
        private static final MemorySegment SIGNAL = symbol("signal");
        private static final MemorySegment ISATTY = symbol("isatty");
        private static final MemorySegment TCGETPGRP = symbol("tcgetpgrp");
        private static final MemorySegment TCSETPGRP = symbol("tcsetpgrp");
        private static final MemorySegment GETPGRP = symbol("getpgrp");
        private static final MemorySegment GETPID = symbol("getpid");
        private static final MemorySegment PIPE2 = symbol("pipe2");
        private static final MemorySegment ENVIRON = symbol("environ");

        @Override
        public int posix_spawnp(
                int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp) {
            Scratch s = SCRATCH.get();
            int rc = (int) call(
                    POSIX_SPAWNP,
                    s.state,
                    s.ints(pid),
                    address(file),
                    address(fileActions),
                    address(attr),
                    address(argv),
                    address(envp));
            s.ints(pid, 0);
            return rc;
        }

        @Override
        public int posix_spawnattr_init(Pointer attr) {
            return call1(SPAWNATTR_INIT, address(attr));
        }

        @Override
        public int posix_spawnattr_destroy(Pointer attr) {
            return call1(SPAWNATTR_DESTROY, address(attr));
        }

        @Override
        public int posix_spawnattr_setflags(Pointer attr, short flags) {
            return call2(SPAWNATTR_SETFLAGS, address(attr), flags);
        }

        @Override
        public int posix_spawnattr_setpgroup(Pointer attr, int pgroup) {
            return call2(SPAWNATTR_SETPGROUP, address(attr), pgroup);
        }

        @Override
        public int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask) {
            return call2(SPAWNATTR_SETSIGMASK, address(attr), address(sigmask));
        }

        @Override
        public int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault) {
            return call2(SPAWNATTR_SETSIGDEFAULT, address(attr), address(sigdefault));
        }

        @Override
        public int posix_spawn_file_actions_init(Pointer fileActions) {
            return call1(FILE_ACTIONS_INIT, address(fileActions));
        }

        @Override
        public int posix_spawn_file_actions_destroy(Pointer fileActions) {
            return call1(FILE_ACTIONS_DESTROY, address(fileActions));
        }

        @Override
        public int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd) {
            return call3(FILE_ACTIONS_ADDDUP2, address(fileActions), fd, newfd);
        }

        @Override
        public boolean addCloseFrom(Pointer fileActions, int lowfd) {
            return FILE_ACTIONS_ADDCLOSEFROM != null
                    && call2(FILE_ACTIONS_ADDCLOSEFROM, address(fileActions), lowfd) == 0;
        }

        @Override
        public int sigemptyset(Pointer set) {
            return call1(SIGEMPTYSET, address(set));
        }

        @Override
        public int sigfillset(Pointer set) {
            return call1(SIGFILLSET, address(set));
        }

        @Override
        public int sigdelset(Pointer set, int signo) {
            return call2(SIGDELSET, address(set), signo);
        }

        @Override
        public int waitpid(int pid, int[] status, int options) {
            Scratch s = SCRATCH.get();
            int rc = (int) call(WAITPID, s.state, pid, s.ints(status), options, 0, 0, 0);
            s.ints(status, 0);
            return rc;
        }

        @Override
        public int waitid(int idtype, int id, Pointer infop, int options) {
            return (int) call(WAITID, idtype, u(id), address(infop), options, 0, 0);
        }

        @Override
        public int kill(int pid, int sig) {
            return call2(KILL, pid, sig);
        }

        @Override
        public Pointer signal(int signum, Pointer handler) {
            return pointer(call(SIGNAL, signum, address(handler), 0, 0, 0, 0));
        }

        @Override
        public int isatty(int fd) {
            return call1(ISATTY, fd);
        }

        @Override
        public int tcgetpgrp(int fd) {
            return call1(TCGETPGRP, fd);
        }

        @Override
        public int tcsetpgrp(int fd, int pgrp) {
            return call2(TCSETPGRP, fd, pgrp);
        }

        @Override
        public int getpgrp() {
            return call0(GETPGRP);
        }

        @Override
        public int getpid() {
            return call0(GETPID);
        }

        @Override
        public int pipe2(int[] fds, int flags) {
            Scratch s = SCRATCH.get();
            int rc = (int) call(PIPE2, s.state, s.ints(fds), flags, 0, 0, 0, 0);
            s.ints(fds, 0);
            return rc;
        }

        @Override
        public Pointer environ() {
            return pointer(ENVIRON.reinterpret(ADDRESS.byteSize()).get(JAVA_LONG, 0));
        }
    }
}
