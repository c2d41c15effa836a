package dev.interlock.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/** Raw libc calls for the {@code dir:} baselines (the hard-link dotlock floor), by JNA direct mapping. */
final class DirRaw {
    static {
        Native.register(NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    static final int O_WRONLY = 1;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_CLOEXEC = 02000000;

    static native int open(byte[] path, int flags, int mode);

    static native long write(int fd, byte[] buf, long n);

    static native int close(int fd);

    static native int link(byte[] from, byte[] to);

    static native int unlink(byte[] path);

    private DirRaw() {}

    /**
     * One uncontended round of the classic NFS-safe dotlock (seed 000, liblockfile): create a unique
     * temp file with the holder's record, link it to the lock name, unlink the temp; later unlink the lock.
     */
    static int dotlockRound(byte[] tmp, byte[] lock, byte[] record) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            throw new IllegalStateException("create failed");
        }
        write(fd, record, record.length);
        close(fd);
        if (link(tmp, lock) != 0) {
            throw new IllegalStateException("link failed: the lock is held");
        }
        unlink(tmp);
        return unlink(lock);
    }
}
