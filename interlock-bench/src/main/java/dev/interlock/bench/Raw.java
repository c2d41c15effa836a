package dev.interlock.bench;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Raw libc calls for baselines, through the same JNA direct mapping the flock: backend uses. */
final class Raw {
    static {
        Native.register(NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    static final int O_CLOEXEC = 02000000;
    static final int LOCK_SH = 1;
    static final int LOCK_EX = 2;
    static final int LOCK_NB = 4;
    static final int LOCK_UN = 8;

    static native int open(byte[] path, int flags, int mode);

    static native int close(int fd);

    static native int flock(int fd, int op);

    private Raw() {}

    static byte[] path(Path p) {
        byte[] b = p.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[b.length + 1];
        System.arraycopy(b, 0, out, 0, b.length);
        return out;
    }
}
