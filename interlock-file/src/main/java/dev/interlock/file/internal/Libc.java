package dev.interlock.file.internal;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The C library, the architecture checks and the functions bound lazily, shared by the three
 * bindings of this package ({@link LibcFiles}, {@link LibcProcesses}, {@link LibcEvents}).
 *
 * <p>Linux only. The constants of the bindings are those of the kernel's asm-generic headers,
 * which x86-64 uses, with the values where arm and aarch64 (and ppc) differ; the architectures
 * whose headers differ more (alpha, mips, parisc, sparc: other O_* and errno values) are refused
 * here, at binding time, with a message, rather than called with wrong flags.
 */
final class Libc {
    private Libc() {}

    /** Why the natives cannot be used on this platform, or null if they can. */
    static final String UNSUPPORTED = unsupported();

    private static String unsupported() {
        if (!Platform.isLinux()) {
            return "Interlock's native calls need Linux (this is " + System.getProperty("os.name") + ")";
        }
        String arch = Platform.ARCH.toLowerCase(Locale.ROOT);
        if (arch.startsWith("mips") || arch.startsWith("sparc") || arch.startsWith("alpha") || arch.startsWith("parisc")
                || arch.startsWith("hppa")) {
            return "Interlock's native calls do not support the " + Platform.ARCH
                    + " architecture (its open(2) flags and error numbers differ from asm-generic)";
        }
        return null;
    }

    /** True on the architectures whose O_DIRECTORY and O_NOFOLLOW are 040000 and 0100000 (arm, aarch64, ppc). */
    static final boolean ARM_LIKE_FCNTL = Platform.isARM() || Platform.isPPC();

    private static volatile NativeLibrary library;

    /** The C library; throws UnsatisfiedLinkError with a clear message where it cannot be used. */
    static NativeLibrary library() {
        NativeLibrary l = library;
        if (l == null) {
            if (UNSUPPORTED != null) {
                throw new UnsatisfiedLinkError(UNSUPPORTED);
            }
            l = open();
            library = l;
        }
        return l;
    }

    /**
     * glibc's C library by its soname first: JNA's name for it, "c", makes it try "libc.so" (a
     * linker script that dlopen refuses, when the dev package is installed at all) and then run
     * {@code ldconfig -p} in a child process to find the real file, which cost every start a fork
     * and an exec. Other C libraries (musl) are found by that search as before.
     */
    private static NativeLibrary open() {
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

    /** strerror(3), for the error numbers {@link Errno} does not name; null if it cannot be called. */
    static String strerror(int errnum) {
        try {
            return function("strerror").invokeString(new Object[] {errnum}, false);
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            return null;
        }
    }

    /** The charset of file names: the JVM's own ({@code sun.jnu.encoding}), as java.io and java.nio use. */
    static final Charset PATH_CHARSET = pathCharset();

    private static Charset pathCharset() {
        String jnu = System.getProperty("sun.jnu.encoding");
        try {
            return jnu != null ? Charset.forName(jnu) : StandardCharsets.UTF_8;
        } catch (RuntimeException e) {
            return StandardCharsets.UTF_8;
        }
    }
}
