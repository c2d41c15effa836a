package dev.interlock.file.internal;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * What the native paths share: the architecture checks, the file-name charset, and the choice of
 * the path that calls C for this process ({@link #NATIVES}).
 *
 * <p><b>Two paths.</b> On JDK 22 and later the functions are called through the Foreign Function
 * &amp; Memory API ({@code FfmNatives}): no native library to unpack and load, no JNI stubs, and
 * each call costs less (a quarter less for the open, flock, unlock, close sequence); its set-up
 * costs a short command more than JNA's, though (docs/benchmarks.md), so the command-line tool
 * may prefer JNA. On JDK 17–21, or where the jar was built
 * without a JDK 22+ compiler (its {@code META-INF/versions/22} is then empty), through JNA
 * ({@link JnaNatives}). {@code -Dinterlock.natives=jna} forces JNA on any JDK (to compare the two,
 * or to get round a problem with FFM); {@code jna-call} forces JNA without registering the file
 * functions (each looked up and called through JNA's {@code Function}: slower calls, no set-up),
 * which the command-line tool uses. The paths behave the same: the tests run on each.
 *
 * <p>Linux only. The constants of the bindings are those of the kernel's asm-generic headers,
 * which x86-64 uses, with the values where arm and aarch64 (and ppc) differ; the architectures
 * whose headers differ more (alpha, mips, parisc, sparc: other O_* and errno values) are refused
 * here, at binding time, with a message, rather than called with wrong flags. The architecture is
 * read from {@code os.arch} (the names JNA's {@code Platform} reads too) so that the FFM path
 * loads nothing of JNA.
 */
final class Libc {
    private Libc() {}

    private static final String ARCH = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);

    /** Why the natives cannot be used on this platform, or null if they can. */
    static final String UNSUPPORTED = unsupported();

    private static String unsupported() {
        String os = System.getProperty("os.name", "");
        if (!os.startsWith("Linux")) {
            return "Interlock's native calls need Linux (this is " + os + ")";
        }
        if (ARCH.startsWith("mips")
                || ARCH.startsWith("sparc")
                || ARCH.startsWith("alpha")
                || ARCH.startsWith("parisc")
                || ARCH.startsWith("hppa")) {
            return "Interlock's native calls do not support the " + ARCH
                    + " architecture (its open(2) flags and error numbers differ from asm-generic)";
        }
        return null;
    }

    private static final boolean INTEL = ARCH.equals("amd64")
            || ARCH.equals("x86_64")
            || ARCH.equals("x86")
            || (ARCH.length() == 4 && ARCH.charAt(0) == 'i' && ARCH.endsWith("86"));
    private static final boolean ARM = ARCH.startsWith("arm") || ARCH.startsWith("aarch");
    private static final boolean PPC = ARCH.startsWith("ppc") || ARCH.startsWith("powerpc");
    static final boolean BITS64 = "64".equals(System.getProperty("sun.arch.data.model")) || ARCH.contains("64");

    /** True on the architectures whose O_DIRECTORY and O_NOFOLLOW are 040000 and 0100000 (arm, aarch64, ppc). */
    static final boolean ARM_LIKE_FCNTL = ARM || PPC;

    /**
     * {@code SYS_getdents64}: 217 on x86-64, 61 on aarch64, riscv64 and loongarch64
     * (asm-generic/unistd.h), 220 on x86 and s390x, 217 on arm, 202 on ppc.
     */
    static final long SYS_GETDENTS64 =
            INTEL ? (BITS64 ? 217 : 220) : ARM ? (BITS64 ? 61 : 217) : PPC ? 202 : ARCH.startsWith("s390") ? 220 : 61;

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

    /** The class of the FFM path; present only in {@code META-INF/versions/22} of a multi-release jar. */
    static final String FFM_CLASS = "dev.interlock.file.internal.FfmNatives";

    /**
     * Where the FFM class puts its instance when it is initialised: a handshake without reflection
     * (which costs start-up time on JDK 22+). A class of its own, so that the FFM class setting it
     * never starts the initialisation of Libc: if it did, whichever of the two was initialised
     * first, Libc would choose before the instance was there, and fall back to JNA.
     */
    static final class FfmSlot {
        private FfmSlot() {}

        static volatile Natives instance;
    }

    /** The path of this process: FFM on JDK 22+ when the jar has it, unless {@code interlock.natives=jna} or {@code jna-call}; else JNA. */
    static final Natives NATIVES = select(System.getProperty("interlock.natives", ""));

    static Natives select(String wanted) {
        if (!wanted.startsWith("jna") && Runtime.version().feature() >= 22) {
            try {
                Class.forName(FFM_CLASS, true, Libc.class.getClassLoader());
                Natives ffm = FfmSlot.instance;
                if (ffm != null) {
                    return ffm;
                }
            } catch (ClassNotFoundException | LinkageError e) {
                // a single-release build (no JDK 22+ compiler at build time), classes read from a
                // directory rather than the multi-release jar, or FFM not usable here: JNA
            }
        }
        return new JnaNatives(wanted.equals("jna-call"));
    }

    /** strerror(3), for the error numbers {@link Errno} does not name; null if it cannot be called. */
    static String strerror(int errnum) {
        return NATIVES.strerror(errnum);
    }
}
