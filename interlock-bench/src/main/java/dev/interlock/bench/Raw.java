package dev.interlock.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Raw libc calls for the baselines, through the same JNA direct mapping the backends use. */
final class Raw {
    static {
        Native.register(NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    static final int O_WRONLY = 1;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_CLOEXEC = 02000000;
    static final int LOCK_SH = 1;
    static final int LOCK_EX = 2;
    static final int LOCK_NB = 4;
    static final int LOCK_UN = 8;

    static native int open(byte[] path, int flags, int mode);

    static native long write(int fd, byte[] buf, long n);

    static native int close(int fd);

    static native int flock(int fd, int op);

    static native int link(byte[] from, byte[] to);

    static native int unlink(byte[] path);

    private Raw() {}

    static byte[] path(Path p) {
        byte[] b = p.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[b.length + 1];
        System.arraycopy(b, 0, out, 0, b.length);
        return out;
    }

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
