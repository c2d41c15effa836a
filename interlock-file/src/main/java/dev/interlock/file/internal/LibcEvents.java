package dev.interlock.file.internal;

import com.sun.jna.Native;

/**
 * Internal API of Interlock (not for applications; may change in any release): inotify, eventfd
 * and poll, by JNA direct mapping, for the one {@link InotifyWatcher} of the process. Registered
 * when the watcher starts (the first wait of any lock space), so a process that never waits never
 * binds them. Conventions as in {@link LibcFiles}; read and write of the descriptors go through
 * {@link LibcFiles}.
 *
 * <p>The constants are those of include/uapi/linux/inotify.h, the same on every Linux
 * architecture; IN_NONBLOCK and IN_CLOEXEC equal O_NONBLOCK and O_CLOEXEC, which are the same on
 * x86-64 and aarch64.
 */
public final class LibcEvents {
    static {
        Native.register(LibcEvents.class, Libc.library());
    }

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

    /** eventfd(2) flags (EFD_CLOEXEC = O_CLOEXEC, EFD_NONBLOCK = O_NONBLOCK, as in the kernel's eventfd.h). */
    public static final int EFD_CLOEXEC = LibcFiles.O_CLOEXEC;
    public static final int EFD_NONBLOCK = LibcFiles.O_NONBLOCK;
    /** poll(2) events, the same on every Linux architecture. */
    public static final int POLLIN = 0x1;
    public static final int POLLERR = 0x8;
    public static final int POLLHUP = 0x10;
    public static final int POLLNVAL = 0x20;

    public static native int inotify_init1(int flags);

    public static native int inotify_add_watch(int fd, byte[] path, int mask);

    public static native int inotify_rm_watch(int fd, int wd);

    public static native int eventfd(int initval, int flags);

    /**
     * poll(2) over {@code nfds} struct pollfd of 8 bytes each in {@code pollfds} (int fd, short
     * events, short revents; native byte order), revents written back.
     */
    public static native int poll(byte[] pollfds, long nfds, int timeoutMs);
}
