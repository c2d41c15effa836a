package dev.interlock.file.internal;

/**
 * Internal API of Interlock (not for applications; may change in any release): inotify, poll and
 * eventfd, for the one {@link InotifyWatcher} of the process, through FFM or JNA direct mapping
 * ({@link Natives}). Bound when the watcher starts (the first wait of any lock space), so a process
 * that never waits never binds them. Conventions as in {@link LibcFiles}; read and write of the
 * descriptors go through {@link LibcFiles}.
 *
 * <p>The constants are those of include/uapi/linux/inotify.h, the same on every Linux
 * architecture; IN_NONBLOCK and IN_CLOEXEC equal O_NONBLOCK and O_CLOEXEC, which are the same on
 * x86-64 and aarch64; those of poll(2) and eventfd(2) are the same everywhere too.
 */
public final class LibcEvents {
    private static final Natives.Events N = Libc.NATIVES.events();

    private LibcEvents() {}

    public static final int IN_ACCESS = 0x1;
    public static final int IN_MODIFY = 0x2;
    public static final int IN_ATTRIB = 0x4;
    public static final int IN_CLOSE_WRITE = 0x8;
    public static final int IN_CLOSE_NOWRITE = 0x10;
    public static final int IN_OPEN = 0x20;
    public static final int IN_MOVED_FROM = 0x40;
    public static final int IN_MOVED_TO = 0x80;
    public static final int IN_CREATE = 0x100;
    public static final int IN_DELETE = 0x200;
    public static final int IN_DELETE_SELF = 0x400;
    public static final int IN_MOVE_SELF = 0x800;
    /** Every event a watch can ask for. */
    public static final int IN_ALL_EVENTS = 0xfff;

    public static final int IN_UNMOUNT = 0x2000;
    public static final int IN_Q_OVERFLOW = 0x4000;
    public static final int IN_IGNORED = 0x8000;
    public static final int IN_ONLYDIR = 0x01000000;
    public static final int IN_DONT_FOLLOW = 0x02000000;
    public static final int IN_MASK_ADD = 0x20000000;
    public static final int IN_NONBLOCK = LibcFiles.O_NONBLOCK;
    public static final int IN_CLOEXEC = LibcFiles.O_CLOEXEC;

    // <sys/eventfd.h>, <poll.h>
    public static final int EFD_CLOEXEC = 02000000;
    public static final int EFD_NONBLOCK = 04000;
    public static final int POLLIN = 1;

    public static int inotify_init1(int flags) {
        return N.inotify_init1(flags);
    }

    public static int inotify_add_watch(int fd, byte[] path, int mask) {
        return N.inotify_add_watch(fd, path, mask);
    }

    public static int inotify_rm_watch(int fd, int wd) {
        return N.inotify_rm_watch(fd, wd);
    }

    /**
     * poll(2) on {@code nfds} {@code struct pollfd} records of 8 bytes in {@code pollfds} (int fd,
     * short events, short revents, native byte order); the revents are written back.
     */
    public static int poll(byte[] pollfds, long nfds, int timeoutMs) {
        return N.poll(pollfds, nfds, timeoutMs);
    }

    /** eventfd(2): a counter descriptor ({@link #EFD_CLOEXEC}, {@link #EFD_NONBLOCK}). */
    public static int eventfd(int initval, int flags) {
        return N.eventfd(initval, flags);
    }
}
