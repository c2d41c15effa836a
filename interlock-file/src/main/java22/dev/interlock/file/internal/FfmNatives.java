package dev.interlock.file.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

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
 * {@link Libc#select}. No native library of ours is loaded and nothing is registered: each
 * function gets its downcall handle at its first call (a holder class per function, whose
 * {@code static final} handle the JIT treats as a constant).
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
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
            .byteOffset(MemoryLayout.PathElement.groupElement("errno"));
    private static final long STATE_SIZE = Linker.Option.captureStateLayout().byteSize();

    FfmNatives() {
        if (Runtime.version().feature() < 24 && !FfmNatives.class.getModule().isNativeAccessEnabled()) {
            throw new UnsupportedOperationException("native access is not enabled: JNA, which does not warn on this JDK");
        }
    }

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

    @Override
    public String strerror(int errnum) {
        try {
            MemorySegment s = (MemorySegment) Strerror.H.invokeExact(errnum);
            return s.equals(MemorySegment.NULL) ? null : s.reinterpret(Integer.MAX_VALUE).getString(0, Libc.PATH_CHARSET);
        } catch (Throwable t) {
            return null;
        }
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

    // ------------------------------------------------------------------------------ binding

    private static Optional<MemorySegment> find(String name) {
        if (Libc.UNSUPPORTED != null) {
            throw new UnsatisfiedLinkError(Libc.UNSUPPORTED);
        }
        return LINKER.defaultLookup().find(name);
    }

    private static MemorySegment symbol(String name) {
        return find(name).orElseThrow(() -> new UnsatisfiedLinkError("the C library has no function " + name));
    }

    /** A handle to {@code name} returning {@code ret}, whose first parameter is the errno capture segment. */
    static MethodHandle bind(String name, MemoryLayout ret, MemoryLayout... args) {
        return LINKER.downcallHandle(symbol(name), FunctionDescriptor.of(ret, args), ERRNO);
    }

    private static final class Strerror {
        static final MethodHandle H = LINKER.downcallHandle(symbol("strerror"), FunctionDescriptor.of(ADDRESS, JAVA_INT));
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

    private static MemorySegment address(Pointer p) {
        return p == null ? MemorySegment.NULL : MemorySegment.ofAddress(Pointer.nativeValue(p));
    }

    private static Pointer pointer(MemorySegment s) {
        return s.address() == 0 ? null : new Pointer(s.address());
    }

    /** A length that fits its array: JNA passes the count as is, and a larger one would let C write past the copy. */
    private static long fit(long count, byte[] a) {
        return a == null ? count : count < 0 || count > a.length ? a.length : count;
    }

    // ------------------------------------------------------------------------------ scratch

    /** Per thread: the errno capture segment and a buffer for arrays, grown as needed (freed with the thread's Scratch). */
    private static final class Scratch {
        final MemorySegment state;
        private MemorySegment buf;

        Scratch() {
            Arena arena = Arena.ofAuto();
            state = arena.allocate(STATE_SIZE, 8);
            buf = arena.allocate(4096, 8);
        }

        /** The buffer, at least {@code size} bytes; what it held before is lost if it grows. */
        MemorySegment reserve(long size) {
            if (buf.byteSize() < size) {
                buf = Arena.ofAuto().allocate(Math.max(size, 2 * buf.byteSize()), 8);
            }
            return buf;
        }

        /** {@code a} copied at {@code off} of the buffer (reserved before), or NULL for null. */
        MemorySegment put(long off, byte[] a) {
            if (a == null) {
                return MemorySegment.NULL;
            }
            MemorySegment.copy(a, 0, buf, JAVA_BYTE, off, a.length);
            return off == 0 ? buf : buf.asSlice(off);
        }

        /** One byte array in. */
        MemorySegment in(byte[] a) {
            reserve(a == null ? 0 : a.length);
            return put(0, a);
        }

        /** The first {@code n} bytes at {@code off} back into {@code a} (nothing if n <= 0). */
        void out(long off, byte[] a, long n) {
            if (a != null && n > 0) {
                MemorySegment.copy(buf, JAVA_BYTE, off, a, 0, (int) Math.min(n, a.length));
            }
        }

        MemorySegment ints(int[] a) {
            reserve(4L * a.length);
            MemorySegment.copy(a, 0, buf, JAVA_INT, 0, a.length);
            return buf;
        }

        void ints(MemorySegment s, int[] a) {
            MemorySegment.copy(s, JAVA_INT, 0, a, 0, a.length);
        }
    }

    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private static long align(long n) {
        return (n + 7) & ~7L;
    }

    // ------------------------------------------------------------------------------ files

    static final class Files implements Natives.Files {
        // One holder per function: bound at its first call.
        private static final class Openat { static final MethodHandle H = bind("openat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT); }
        private static final class Close { static final MethodHandle H = bind("close", JAVA_INT, JAVA_INT); }
        private static final class Read { static final MethodHandle H = bind("read", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG); }
        private static final class Write { static final MethodHandle H = bind("write", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG); }
        private static final class Pread { static final MethodHandle H = bind("pread", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG); }
        private static final class Pwrite { static final MethodHandle H = bind("pwrite", JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG); }
        private static final class Ftruncate { static final MethodHandle H = bind("ftruncate", JAVA_INT, JAVA_INT, JAVA_LONG); }
        private static final class Fsync { static final MethodHandle H = bind("fsync", JAVA_INT, JAVA_INT); }
        private static final class Fcntl {
            static final MethodHandle H = LINKER.downcallHandle(symbol("fcntl"), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT),
                    Linker.Option.firstVariadicArg(2), ERRNO);
        }
        private static final class Flock { static final MethodHandle H = bind("flock", JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Fchmod { static final MethodHandle H = bind("fchmod", JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Fchmodat { static final MethodHandle H = bind("fchmodat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT); }
        private static final class Fchown { static final MethodHandle H = bind("fchown", JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Faccessat { static final MethodHandle H = bind("faccessat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT); }
        private static final class Mkdirat { static final MethodHandle H = bind("mkdirat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Renameat { static final MethodHandle H = bind("renameat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS); }
        private static final class Unlinkat { static final MethodHandle H = bind("unlinkat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Linkat { static final MethodHandle H = bind("linkat", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Readlinkat { static final MethodHandle H = bind("readlinkat", JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG); }
        private static final class Statx { static final MethodHandle H = bind("statx", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS); }
        private static final class Fstatfs { static final MethodHandle H = bind("fstatfs", JAVA_INT, JAVA_INT, ADDRESS); }
        private static final class Geteuid { static final MethodHandle H = bind("geteuid", JAVA_INT); }
        private static final class Fsetxattr { static final MethodHandle H = bind("fsetxattr", JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT); }
        private static final class Fgetxattr { static final MethodHandle H = bind("fgetxattr", JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG); }
        /** syscall(2) is variadic after the number; glibc wrapped getdents64 late (2.30). */
        private static final class Syscall {
            static final MethodHandle H = LINKER.downcallHandle(symbol("syscall"),
                    FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG), Linker.Option.firstVariadicArg(1), ERRNO);
        }

        @Override
        public int openat(int dirfd, byte[] path, int flags, int mode) {
            Scratch s = SCRATCH.get();
            try {
                return (int) Openat.H.invokeExact(s.state, dirfd, s.in(path), flags, mode);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int close(int fd) {
            try {
                return (int) Close.H.invokeExact(SCRATCH.get().state, fd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long read(int fd, byte[] buf, long count) {
            Scratch s = SCRATCH.get();
            long c = fit(count, buf);
            try {
                long n = (long) Read.H.invokeExact(s.state, fd, s.reserve(c), c);
                s.out(0, buf, n);
                return n;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long write(int fd, byte[] buf, long count) {
            Scratch s = SCRATCH.get();
            try {
                return (long) Write.H.invokeExact(s.state, fd, s.in(buf), fit(count, buf));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long pread(int fd, byte[] buf, long count, long offset) {
            Scratch s = SCRATCH.get();
            long c = fit(count, buf);
            try {
                long n = (long) Pread.H.invokeExact(s.state, fd, s.reserve(c), c, offset);
                s.out(0, buf, n);
                return n;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long pwrite(int fd, byte[] buf, long count, long offset) {
            Scratch s = SCRATCH.get();
            try {
                return (long) Pwrite.H.invokeExact(s.state, fd, s.in(buf), fit(count, buf), offset);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int ftruncate(int fd, long length) {
            try {
                return (int) Ftruncate.H.invokeExact(SCRATCH.get().state, fd, length);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fsync(int fd) {
            try {
                return (int) Fsync.H.invokeExact(SCRATCH.get().state, fd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fcntl(int fd, int cmd, int arg) {
            try {
                return (int) Fcntl.H.invokeExact(SCRATCH.get().state, fd, cmd, arg);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int flock(int fd, int operation) {
            try {
                return (int) Flock.H.invokeExact(SCRATCH.get().state, fd, operation);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fchmod(int fd, int mode) {
            try {
                return (int) Fchmod.H.invokeExact(SCRATCH.get().state, fd, mode);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fchmodat(int dirfd, byte[] path, int mode, int flags) {
            Scratch s = SCRATCH.get();
            try {
                return (int) Fchmodat.H.invokeExact(s.state, dirfd, s.in(path), mode, flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fchown(int fd, int uid, int gid) {
            try {
                return (int) Fchown.H.invokeExact(SCRATCH.get().state, fd, uid, gid);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int faccessat(int dirfd, byte[] path, int mode, int flags) {
            Scratch s = SCRATCH.get();
            try {
                return (int) Faccessat.H.invokeExact(s.state, dirfd, s.in(path), mode, flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int mkdirat(int dirfd, byte[] path, int mode) {
            Scratch s = SCRATCH.get();
            try {
                return (int) Mkdirat.H.invokeExact(s.state, dirfd, s.in(path), mode);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int renameat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath) {
            Scratch s = SCRATCH.get();
            long second = align(oldpath.length);
            s.reserve(second + newpath.length);
            try {
                return (int) Renameat.H.invokeExact(s.state, olddirfd, s.put(0, oldpath), newdirfd, s.put(second, newpath));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int unlinkat(int dirfd, byte[] path, int flags) {
            Scratch s = SCRATCH.get();
            try {
                return (int) Unlinkat.H.invokeExact(s.state, dirfd, s.in(path), flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int linkat(int olddirfd, byte[] oldpath, int newdirfd, byte[] newpath, int flags) {
            Scratch s = SCRATCH.get();
            long second = align(oldpath.length);
            s.reserve(second + newpath.length);
            try {
                return (int) Linkat.H.invokeExact(s.state, olddirfd, s.put(0, oldpath), newdirfd, s.put(second, newpath), flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long readlinkat(int dirfd, byte[] path, byte[] buf, long size) {
            Scratch s = SCRATCH.get();
            long second = align(path.length);
            long c = fit(size, buf);
            s.reserve(second + c);
            try {
                long n = (long) Readlinkat.H.invokeExact(s.state, dirfd, s.put(0, path), s.reserve(0).asSlice(second), c);
                s.out(second, buf, n);
                return n;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int statx(int dirfd, byte[] path, int flags, int mask, byte[] buf) {
            Scratch s = SCRATCH.get();
            long second = align(path.length);
            s.reserve(second + buf.length);
            try {
                MemorySegment p = s.put(0, path);
                MemorySegment b = s.put(second, buf);
                int rc = (int) Statx.H.invokeExact(s.state, dirfd, p, flags, mask, b);
                s.out(second, buf, buf.length);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fstatfs(int fd, byte[] buf) {
            Scratch s = SCRATCH.get();
            try {
                int rc = (int) Fstatfs.H.invokeExact(s.state, fd, s.in(buf));
                s.out(0, buf, buf.length);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int geteuid() {
            try {
                return (int) Geteuid.H.invokeExact(SCRATCH.get().state);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int fsetxattr(int fd, byte[] name, byte[] value, long size, int flags) {
            Scratch s = SCRATCH.get();
            long second = align(name.length);
            s.reserve(second + (value == null ? 0 : value.length));
            try {
                return (int) Fsetxattr.H.invokeExact(s.state, fd, s.put(0, name), s.put(second, value), fit(size, value), flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long fgetxattr(int fd, byte[] name, byte[] value, long size) {
            Scratch s = SCRATCH.get();
            long second = align(name.length);
            long c = fit(size, value);
            s.reserve(second + (value == null ? 0 : c));
            try {
                MemorySegment v = value == null ? MemorySegment.NULL : s.reserve(0).asSlice(second);
                long n = (long) Fgetxattr.H.invokeExact(s.state, fd, s.put(0, name), v, c);
                s.out(second, value, n);
                return n;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long getdents64(int fd, Pointer buf, long count) {
            try {
                return (long) Syscall.H.invokeExact(SCRATCH.get().state, Libc.SYS_GETDENTS64, (long) fd, address(buf), count);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public long getdents64(int fd, byte[] into) {
            Scratch s = SCRATCH.get();
            long c = Math.min(into.length, LibcFiles.DENTS_SIZE);
            try {
                long n = (long) Syscall.H.invokeExact(s.state, Libc.SYS_GETDENTS64, (long) fd, s.reserve(c), c);
                s.out(0, into, n);
                return n;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    // ------------------------------------------------------------------------------ events

    static final class Events implements Natives.Events {
        private static final class InotifyInit1 { static final MethodHandle H = bind("inotify_init1", JAVA_INT, JAVA_INT); }
        private static final class InotifyAddWatch { static final MethodHandle H = bind("inotify_add_watch", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class InotifyRmWatch { static final MethodHandle H = bind("inotify_rm_watch", JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Poll { static final MethodHandle H = bind("poll", JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT); }
        private static final class Eventfd { static final MethodHandle H = bind("eventfd", JAVA_INT, JAVA_INT, JAVA_INT); }

        @Override
        public int inotify_init1(int flags) {
            try {
                return (int) InotifyInit1.H.invokeExact(SCRATCH.get().state, flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int inotify_add_watch(int fd, byte[] path, int mask) {
            Scratch s = SCRATCH.get();
            try {
                return (int) InotifyAddWatch.H.invokeExact(s.state, fd, s.in(path), mask);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int inotify_rm_watch(int fd, int wd) {
            try {
                return (int) InotifyRmWatch.H.invokeExact(SCRATCH.get().state, fd, wd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int poll(byte[] pollfds, long nfds, int timeoutMs) {
            Scratch s = SCRATCH.get();
            long n = Math.max(0, Math.min(nfds, pollfds.length / 8));
            try {
                int rc = (int) Poll.H.invokeExact(s.state, s.in(pollfds), n, timeoutMs);
                s.out(0, pollfds, 8 * n);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int eventfd(int initval, int flags) {
            try {
                return (int) Eventfd.H.invokeExact(SCRATCH.get().state, initval, flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    // ------------------------------------------------------------------------------ processes

    static final class Processes implements Natives.Processes {
        private static final class PosixSpawnp {
            static final MethodHandle H = bind("posix_spawnp", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS);
        }
        private static final class SpawnattrInit { static final MethodHandle H = bind("posix_spawnattr_init", JAVA_INT, ADDRESS); }
        private static final class SpawnattrDestroy { static final MethodHandle H = bind("posix_spawnattr_destroy", JAVA_INT, ADDRESS); }
        private static final class SpawnattrSetflags { static final MethodHandle H = bind("posix_spawnattr_setflags", JAVA_INT, ADDRESS, JAVA_SHORT); }
        private static final class SpawnattrSetpgroup { static final MethodHandle H = bind("posix_spawnattr_setpgroup", JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class SpawnattrSetsigmask { static final MethodHandle H = bind("posix_spawnattr_setsigmask", JAVA_INT, ADDRESS, ADDRESS); }
        private static final class SpawnattrSetsigdefault {
            static final MethodHandle H = bind("posix_spawnattr_setsigdefault", JAVA_INT, ADDRESS, ADDRESS);
        }
        private static final class FileActionsInit { static final MethodHandle H = bind("posix_spawn_file_actions_init", JAVA_INT, ADDRESS); }
        private static final class FileActionsDestroy { static final MethodHandle H = bind("posix_spawn_file_actions_destroy", JAVA_INT, ADDRESS); }
        private static final class FileActionsAdddup2 {
            static final MethodHandle H = bind("posix_spawn_file_actions_adddup2", JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT);
        }
        /** Null where the C library lacks it (glibc before 2.34). */
        private static final class FileActionsAddclosefrom {
            static final MethodHandle H = find("posix_spawn_file_actions_addclosefrom_np")
                    .map(f -> LINKER.downcallHandle(f, FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT), ERRNO)).orElse(null);
        }
        private static final class Sigemptyset { static final MethodHandle H = bind("sigemptyset", JAVA_INT, ADDRESS); }
        private static final class Sigfillset { static final MethodHandle H = bind("sigfillset", JAVA_INT, ADDRESS); }
        private static final class Sigdelset { static final MethodHandle H = bind("sigdelset", JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Waitpid { static final MethodHandle H = bind("waitpid", JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Waitid { static final MethodHandle H = bind("waitid", JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT); }
        private static final class Kill { static final MethodHandle H = bind("kill", JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Signal { static final MethodHandle H = bind("signal", ADDRESS, JAVA_INT, ADDRESS); }
        private static final class Isatty { static final MethodHandle H = bind("isatty", JAVA_INT, JAVA_INT); }
        private static final class Tcgetpgrp { static final MethodHandle H = bind("tcgetpgrp", JAVA_INT, JAVA_INT); }
        private static final class Tcsetpgrp { static final MethodHandle H = bind("tcsetpgrp", JAVA_INT, JAVA_INT, JAVA_INT); }
        private static final class Getpgrp { static final MethodHandle H = bind("getpgrp", JAVA_INT); }
        private static final class Getpid { static final MethodHandle H = bind("getpid", JAVA_INT); }
        private static final class Pipe2 { static final MethodHandle H = bind("pipe2", JAVA_INT, ADDRESS, JAVA_INT); }

        /** A call taking one pointer. */
        private static int call(MethodHandle h, Pointer p) {
            try {
                return (int) h.invokeExact(SCRATCH.get().state, address(p));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        /** A call taking two pointers. */
        private static int call(MethodHandle h, Pointer p, Pointer q) {
            try {
                return (int) h.invokeExact(SCRATCH.get().state, address(p), address(q));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int posix_spawnp(int[] pid, Pointer file, Pointer fileActions, Pointer attr, Pointer argv, Pointer envp) {
            Scratch s = SCRATCH.get();
            try {
                MemorySegment p = s.ints(pid);
                int rc = (int) PosixSpawnp.H.invokeExact(s.state, p, address(file), address(fileActions), address(attr), address(argv),
                        address(envp));
                s.ints(p, pid);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override public int posix_spawnattr_init(Pointer attr) { return call(SpawnattrInit.H, attr); }
        @Override public int posix_spawnattr_destroy(Pointer attr) { return call(SpawnattrDestroy.H, attr); }

        @Override
        public int posix_spawnattr_setflags(Pointer attr, short flags) {
            try {
                return (int) SpawnattrSetflags.H.invokeExact(SCRATCH.get().state, address(attr), flags);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int posix_spawnattr_setpgroup(Pointer attr, int pgroup) {
            try {
                return (int) SpawnattrSetpgroup.H.invokeExact(SCRATCH.get().state, address(attr), pgroup);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override public int posix_spawnattr_setsigmask(Pointer attr, Pointer sigmask) { return call(SpawnattrSetsigmask.H, attr, sigmask); }

        @Override
        public int posix_spawnattr_setsigdefault(Pointer attr, Pointer sigdefault) {
            return call(SpawnattrSetsigdefault.H, attr, sigdefault);
        }

        @Override public int posix_spawn_file_actions_init(Pointer fileActions) { return call(FileActionsInit.H, fileActions); }
        @Override public int posix_spawn_file_actions_destroy(Pointer fileActions) { return call(FileActionsDestroy.H, fileActions); }

        @Override
        public int posix_spawn_file_actions_adddup2(Pointer fileActions, int fd, int newfd) {
            try {
                return (int) FileActionsAdddup2.H.invokeExact(SCRATCH.get().state, address(fileActions), fd, newfd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public boolean addCloseFrom(Pointer fileActions, int lowfd) {
            MethodHandle h = FileActionsAddclosefrom.H;
            if (h == null) {
                return false;
            }
            try {
                return (int) h.invokeExact(SCRATCH.get().state, address(fileActions), lowfd) == 0;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override public int sigemptyset(Pointer set) { return call(Sigemptyset.H, set); }
        @Override public int sigfillset(Pointer set) { return call(Sigfillset.H, set); }

        @Override
        public int sigdelset(Pointer set, int signo) {
            try {
                return (int) Sigdelset.H.invokeExact(SCRATCH.get().state, address(set), signo);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int waitpid(int pid, int[] status, int options) {
            Scratch s = SCRATCH.get();
            try {
                MemorySegment st = s.ints(status);
                int rc = (int) Waitpid.H.invokeExact(s.state, pid, st, options);
                s.ints(st, status);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int waitid(int idtype, int id, Pointer infop, int options) {
            try {
                return (int) Waitid.H.invokeExact(SCRATCH.get().state, idtype, id, address(infop), options);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int kill(int pid, int sig) {
            try {
                return (int) Kill.H.invokeExact(SCRATCH.get().state, pid, sig);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Pointer signal(int signum, Pointer handler) {
            try {
                return pointer((MemorySegment) Signal.H.invokeExact(SCRATCH.get().state, signum, address(handler)));
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int isatty(int fd) {
            try {
                return (int) Isatty.H.invokeExact(SCRATCH.get().state, fd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int tcgetpgrp(int fd) {
            try {
                return (int) Tcgetpgrp.H.invokeExact(SCRATCH.get().state, fd);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int tcsetpgrp(int fd, int pgrp) {
            try {
                return (int) Tcsetpgrp.H.invokeExact(SCRATCH.get().state, fd, pgrp);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int getpgrp() {
            try {
                return (int) Getpgrp.H.invokeExact(SCRATCH.get().state);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int getpid() {
            try {
                return (int) Getpid.H.invokeExact(SCRATCH.get().state);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public int pipe2(int[] fds, int flags) {
            Scratch s = SCRATCH.get();
            try {
                MemorySegment f = s.ints(fds);
                int rc = (int) Pipe2.H.invokeExact(s.state, f, flags);
                s.ints(f, fds);
                return rc;
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        public Pointer environ() {
            return pointer(symbol("environ").reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0));
        }
    }
}
