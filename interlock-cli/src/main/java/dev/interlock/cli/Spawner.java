package dev.interlock.cli;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcProcesses;
import dev.interlock.spi.support.Log;
import java.util.ArrayList;
import java.util.List;

/**
 * Starts processes with {@code posix_spawnp}. Unlike {@link ProcessBuilder}, it can put the child
 * in a process group of our choice and let it inherit a chosen descriptor (the flock lock), with
 * every other descriptor of the JVM closed.
 */
final class Spawner {
    private Spawner() {}

    /** The highest signal number handled (Linux: 64). */
    private static final int MAX_SIGNAL = 64;
    /** Bits of signals 32 and 33, which glibc keeps for itself (SIGCANCEL, SIGSETXID). */
    private static final long INTERNAL_SIGNALS = (1L << 31) | (1L << 32);

    /** A failed spawn, with the errno and the exit status a shell would give (126, 127). */
    static final class SpawnException extends Exception {
        private static final long serialVersionUID = 1L;
        final int errno;

        SpawnException(int errno, String message) {
            super(message);
            this.errno = errno;
        }

        int exitCode() {
            if (errno == Errno.ENOENT) {
                return ExitCodes.NOT_FOUND;
            }
            if (errno == Errno.EACCES || errno == Errno.ENOEXEC || errno == Errno.EPERM) {
                return ExitCodes.CANNOT_EXECUTE;
            }
            return ExitCodes.OSERR;
        }
    }

    /**
     * Signals that were ignored when this process started (inherited from {@code nohup}, or from
     * a shell that started us in the background). The command inherits them ignored, as it would
     * from a shell or from flock(1); every other signal is reset to its default action.
     */
    static long ignoredAtStart() {
        String mask = Env.statusField("SigIgn");
        try {
            return mask == null ? 0 : Long.parseUnsignedLong(mask.trim(), 16);
        } catch (NumberFormatException e) {
            return 0; // not as Linux writes it: reset everything
        }
    }

    /**
     * Spawns {@code argv} (looked up in $PATH like a shell does).
     *
     * @param argv the command and its arguments, as raw bytes
     * @param envp a NULL-terminated array of {@code NAME=value} C strings
     * @param pgroup 0 for a new process group led by the child, else the group to join
     * @param dups pairs {from, to} of descriptors to duplicate in the child, in order
     * @param closeFrom close every descriptor from this one up in the child (after the dups), or -1
     * @param keepIgnored bit (n-1) set: leave signal n ignored if it is; other signals get their defaults
     * @return the pid
     */
    static int spawn(List<byte[]> argv, Pointer envp, int pgroup, int[][] dups, int closeFrom, long keepIgnored)
            throws SpawnException {
        Memory attr = LibcProcesses.opaque();
        Memory actions = LibcProcesses.opaque();
        Memory mask = LibcProcesses.opaque();
        Memory defaults = LibcProcesses.opaque();
        check(LibcProcesses.posix_spawnattr_init(attr), "posix_spawnattr_init");
        try {
            check(LibcProcesses.posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init");
            try {
                check(
                        LibcProcesses.posix_spawnattr_setflags(attr, (short) (LibcProcesses.POSIX_SPAWN_SETPGROUP
                                | LibcProcesses.POSIX_SPAWN_SETSIGMASK
                                | LibcProcesses.POSIX_SPAWN_SETSIGDEF)),
                        "posix_spawnattr_setflags");
                check(LibcProcesses.posix_spawnattr_setpgroup(attr, pgroup), "posix_spawnattr_setpgroup");
                LibcProcesses.sigemptyset(mask);
                check(LibcProcesses.posix_spawnattr_setsigmask(attr, mask), "posix_spawnattr_setsigmask");
                LibcProcesses.sigfillset(defaults);
                // glibc's sigfillset leaves out its two internal signals (32, 33), and its
                // posix_spawn then sets them to SIG_IGN in the child, which exec keeps: the
                // command would start with them ignored, unlike under a shell. Put them in by
                // hand (setsigdefault copies the set as is); on 64-bit Linux word 0 holds 1..64.
                defaults.setLong(0, defaults.getLong(0) | INTERNAL_SIGNALS);
                long stayIgnored = keepIgnored & ~INTERNAL_SIGNALS;
                for (int sig = 1; sig <= MAX_SIGNAL; sig++) {
                    if ((stayIgnored & (1L << (sig - 1))) != 0) {
                        LibcProcesses.sigdelset(defaults, sig);
                    }
                }
                check(LibcProcesses.posix_spawnattr_setsigdefault(attr, defaults), "posix_spawnattr_setsigdefault");
                for (int[] d : dups) {
                    // glibc >= 2.29 clears FD_CLOEXEC when from == to, so this also makes a descriptor inheritable.
                    check(
                            LibcProcesses.posix_spawn_file_actions_adddup2(actions, d[0], d[1]),
                            "posix_spawn_file_actions_adddup2");
                }
                if (closeFrom >= 0 && !LibcProcesses.addCloseFrom(actions, closeFrom)) {
                    // glibc < 2.34: the JVM's other descriptors are close-on-exec in the main; nothing more to do.
                    Log.of(Spawner.class).debug("posix_spawn_file_actions_addclosefrom_np unavailable");
                }
                List<Memory> keep = new ArrayList<>();
                Memory argvArray = new Memory((long) (argv.size() + 1) * Native.POINTER_SIZE);
                for (int i = 0; i < argv.size(); i++) {
                    Memory s = cString(argv.get(i));
                    keep.add(s);
                    argvArray.setPointer((long) i * Native.POINTER_SIZE, s);
                }
                argvArray.setPointer((long) argv.size() * Native.POINTER_SIZE, null);
                int[] pid = new int[1];
                int rc = LibcProcesses.posix_spawnp(pid, keep.get(0), actions, attr, argvArray, envp);
                if (rc != 0) {
                    throw new SpawnException(rc, Errno.describe(rc));
                }
                keep.clear();
                return pid[0];
            } finally {
                LibcProcesses.posix_spawn_file_actions_destroy(actions);
            }
        } finally {
            LibcProcesses.posix_spawnattr_destroy(attr);
        }
    }

    private static void check(int rc, String what) throws SpawnException {
        if (rc != 0) {
            throw new SpawnException(rc, what + " failed: " + Errno.describe(rc));
        }
    }

    static Memory cString(byte[] bytes) {
        Memory m = new Memory(bytes.length + 1L);
        m.write(0, bytes, 0, bytes.length);
        m.setByte(bytes.length, (byte) 0);
        return m;
    }

    /**
     * This process's environment with {@code extra} ({@code NAME=value}, raw bytes) replacing any
     * variables of the same names. Existing entries are reused byte for byte. The returned holder
     * keeps the memory alive.
     */
    static final class Environment {
        final Memory envp;
        private final List<Memory> keep = new ArrayList<>();

        Environment(List<byte[]> extra) {
            this(extra, true);
        }

        /** Only {@code vars} ({@code NAME=value}, raw bytes), nothing of this process's environment. */
        static Environment only(List<byte[]> vars) {
            return new Environment(vars, false);
        }

        private Environment(List<byte[]> extra, boolean inherit) {
            Pointer environ = inherit ? LibcProcesses.environ() : null;
            List<Pointer> entries = new ArrayList<>();
            for (int i = 0; environ != null; i++) {
                Pointer p = environ.getPointer((long) i * Native.POINTER_SIZE);
                if (p == null) {
                    break;
                }
                if (!replaced(p, extra)) {
                    entries.add(p);
                }
            }
            for (byte[] e : extra) {
                Memory m = cString(e);
                keep.add(m);
                entries.add(m);
            }
            envp = new Memory((long) (entries.size() + 1) * Native.POINTER_SIZE);
            for (int i = 0; i < entries.size(); i++) {
                envp.setPointer((long) i * Native.POINTER_SIZE, entries.get(i));
            }
            envp.setPointer((long) entries.size() * Native.POINTER_SIZE, null);
        }

        private static boolean replaced(Pointer entry, List<byte[]> extra) {
            for (byte[] e : extra) {
                int eq = indexOf(e, (byte) '=');
                boolean same = true;
                for (int k = 0; k <= eq; k++) {
                    byte b = entry.getByte(k); // stops at the first difference, so never reads past the NUL
                    if (b != e[k] || b == 0) {
                        same = false;
                        break;
                    }
                }
                if (same) {
                    return true;
                }
            }
            return false;
        }

        private static int indexOf(byte[] a, byte b) {
            for (int i = 0; i < a.length; i++) {
                if (a[i] == b) {
                    return i;
                }
            }
            return a.length - 1;
        }
    }
}
