package dev.interlock.file.dir;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;

/**
 * This process as the {@code dir:} protocol records it, and the same-host liveness test.
 *
 * <p>A holder is judged on this host only if it recorded the same boot id <em>and</em> the same
 * pid namespace as ours, and only if {@code /proc} is the procfs of our pid namespace
 * ({@code /proc/self} names our own pid). Then it is dead iff its process start time differs (the
 * pid was reused), or no process that can still run has the pid (none, or a zombie) and none is
 * left in the process group it led (see {@link #provablyDead}). In every other case (another host,
 * another container, an unreadable {@code /proc}) the answer is "cannot tell", and only the
 * observed lease decides.
 */
final class DirSelf {
    final String host;
    final long pidNs;
    final String bootId;
    final boolean procUsable;
    final long pid;
    final long startTicks;

    private DirSelf(String host, long pid, long startTicks, long pidNs, String bootId, boolean procUsable) {
        this.host = host;
        this.pid = pid;
        this.startTicks = startTicks;
        this.pidNs = pidNs;
        this.bootId = bootId;
        this.procUsable = procUsable;
    }

    static DirSelf current() {
        ProcessIdentity me = ProcessIdentity.current();
        String boot = me.bootId().replace("-", "").toLowerCase(Locale.ROOT);
        if (!boot.matches("[0-9a-f]{1,32}")) {
            boot = "0";
        }
        long ns = pidNamespace();
        boolean procOk = false;
        try {
            Path self = Files.readSymbolicLink(Path.of("/proc/self"));
            procOk = ns > 0
                    && !boot.equals("0")
                    && self.toString().equals(Long.toString(me.pid()))
                    && me.startTicks() > 0;
        } catch (IOException | RuntimeException e) {
            procOk = false;
        }
        String host = me.host();
        if (host.length() > 64) {
            host = host.substring(0, 64);
        }
        if (host.isEmpty()) {
            host = "unknown";
        }
        return new DirSelf(host, me.pid(), me.startTicks(), ns, boot, procOk);
    }

    /** Inode number of our pid namespace ({@code /proc/self/ns/pid -> pid:[N]}), or 0 if unknown. */
    static long pidNamespace() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
            int a = link.indexOf('[');
            int b = link.indexOf(']');
            return Long.parseLong(link.substring(a + 1, b));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** True if the holder shares our kernel and pid namespace, so its pid means the same to us. */
    boolean sameNamespace(DirEntries.Holder h) {
        return procUsable && h.pidNs() == pidNs && h.bootId().equals(bootId);
    }

    /**
     * True only with proof that the holder is gone: same kernel and pid namespace, and either the
     * process with its pid started at another time (the pid was reused, so nothing of the holder
     * can remain), or no process that can still run has its pid <em>and</em> none is left in the
     * process group of that number. A zombie (exited, not yet reaped by its parent) can run no
     * more: {@code kill(pid, 0)} still finds it, so {@code /proc/PID/stat}'s state decides, and a
     * group whose members are all zombies is gone too. The group matters for
     * {@code interlock run}, whose lock is held on behalf of the command's process group (its
     * leader, the sentinel, is the recorded process): the lock stays held while anything in that
     * group can still run. Linux never gives a new process a number still in use as a process
     * group id, so the two checks cannot be confused.
     */
    boolean provablyDead(DirEntries.Holder h) {
        if (!sameNamespace(h) || h.pid() <= 0 || h.pid() > Integer.MAX_VALUE) {
            return false;
        }
        int p = (int) h.pid();
        if (h.pid() == pid) {
            // Our own pid: another acquisition of this process (alive), unless the record names an
            // earlier process that had our pid (crashed, then the pid was reused for us).
            return h.startTicks() > 0 && startTicks > 0 && h.startTicks() != startTicks;
        }
        if (exists(p)) {
            Optional<ProcessIdentity.ProcStat> stat = ProcessIdentity.stat(h.pid());
            if (stat.isPresent()) {
                if (h.startTicks() > 0 && stat.get().startTicks() != h.startTicks()) {
                    return true; // the pid was reused
                }
                if (!stat.get().exited()) {
                    return false; // runs (or may: a reused pid of unknown start time)
                }
                // A zombie: whoever it is, the holder can run no more; its group decides.
            } else if (exists(p)) {
                return false; // unreadable, or exited between kill and the read: asked again, it is there
            }
        }
        return !groupCanRun(p);
    }

    /** True unless the process group {@code pgid} is empty or holds only zombies (or we cannot tell: then true). */
    private static boolean groupCanRun(int pgid) {
        return exists(-pgid) && ProcessIdentity.groupCanRun(pgid);
    }

    /** {@code kill(target, 0)}: a process (or, negative, a process group) exists; EPERM means it does. */
    private static boolean exists(int target) {
        try {
            NativeFiles.kill(target, 0);
            return true;
        } catch (ErrnoException e) {
            return e.errno() != Errno.ESRCH;
        }
    }
}
