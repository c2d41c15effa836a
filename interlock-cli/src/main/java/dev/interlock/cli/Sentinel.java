package dev.interlock.cli;

import com.sun.jna.Memory;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.LibcProcesses;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.ProcessIdentity;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The guard of a command run under a lease, which dies with the JVM: a small {@code /bin/sh}
 * that leads the command's process group and stops that group when the JVM can no longer vouch
 * for the lease.
 *
 * <p>It is started before the lock is requested, and the lock is held on its behalf (see
 * {@link dev.interlock.internal.Leases#onBehalfOf}): on this host, a backend that judges holders
 * by their process ({@code dir:}) sees the lock held while anything in the group can still run,
 * whatever happened to the JVM. It reads lines from a pipe whose other end only the JVM holds:
 * <ul>
 *   <li>{@code arm T K}: the lease was granted or renewed: send SIGTERM to the group in T
 *       seconds and SIGKILL in K, unless re-armed first. The JVM re-arms after every renewal, so
 *       a JVM that is stopped (SIGSTOP, a long pause) or whose renewals hang lets the timer run
 *       out, and the group is killed before the lease can expire;</li>
 *   <li>{@code guard}: the command is about to start, with no timer (a lock that does not
 *       expire);</li>
 *   <li>{@code done}: the command is over; disarm and exit;</li>
 *   <li>end of file: the JVM died; SIGTERM now, SIGKILL after the grace period or when the
 *       armed timer says, whichever comes first, or as soon as nothing of the command is left in
 *       the group: the sentinel then dies with that SIGKILL, so a same-host {@code dir:} waiter
 *       gets the lock once the command is over, not after the grace period. If it was never
 *       armed (the JVM died before the lock was granted, so before the command was started), it
 *       just exits.</li>
 * </ul>
 * The sentinel and its timer ignore the signals meant for the command (and Ctrl-Z); SIGKILL to
 * the group ends them with it. It runs with an empty environment and its timer is sleep(1) by an
 * absolute path that only root can change ({@link TrustedProgram}): nothing in the caller's PATH
 * can stand in for it (as root, a planted {@code sleep} would run as root) or be missing from it.
 */
final class Sentinel implements AutoCloseable {
    private static final Log log = Log.of(Sentinel.class);
    // A timer is a subshell: sleep, TERM the group, sleep, KILL it. Disarming it (USR1) kills and
    // reaps its sleep, so nothing of an old timer is left in the group. $1 is the grace period,
    // $2 the absolute path of sleep(1): the script runs with an empty environment and looks
    // nothing up in PATH (everything else it uses is built into the shell).
    //
    // Once the JVM died, the lock is held on the sentinel's behalf only, and a same-host dir:
    // waiter waits as long as the sentinel lives: it must not outlive the command. So after the
    // SIGTERM it SIGKILLs the group (itself included) as soon as 'others' finds nothing left of
    // the command, and at the latest when the grace period is over (subshell g). 'others' scans
    // /proc with builtins only for a process of the group that can still run (zombies cannot)
    // and is not the sentinel's own: itself, its children (sleep, subshells t and g) and theirs
    // (their sleep), as ProcessGroups.leftovers tells them apart in the JVM. The command is none
    // of these: the JVM spawned it, and the sentinel is no subreaper. The final SIGKILL to the
    // group also reaches whatever the scan missed (hidden by another user's /proc, forked as the
    // scan went by), so a wrong scan can only shorten the grace period, never leave a process of
    // the group running. Nothing joins the group later:
    // a command the JVM was spawning joins it (setpgid) before it closes its copy of the pipe
    // (close-from, exec), so end of file comes after it is in. 'ours' checks that /proc is the
    // procfs of our pid namespace (our own entry leads our group); if not, the grace runs out.
    static final String SCRIPT = "trap '' HUP INT QUIT TERM TSTP TTIN TTOU\n"
            + "grace=$1 sleep=$2\n"
            + "t= g= armed=\n"
            + "disarm() {\n"
            + "  if [ -n \"$t\" ]; then kill -USR1 \"$t\" 2>/dev/null; wait \"$t\" 2>/dev/null; t=; fi\n"
            + "}\n"
            + "ours() {\n"
            + "  read -r l 2>/dev/null </proc/$$/stat || return 1\n"
            + "  set -- ${l##*\") \"}\n"
            + "  [ \"$3\" = \"$$\" ]\n"
            + "}\n"
            + "others() {\n"
            + "  for f in /proc/[1-9]*/stat; do\n"
            + "    read -r l 2>/dev/null <\"$f\" || continue\n"
            + "    set -- ${l##*\") \"}\n"
            + "    [ \"$3\" = \"$$\" ] && [ \"$f\" != \"/proc/$$/stat\" ] || continue\n"
            + "    case $1 in Z|X|x) continue ;; esac\n"
            + "    case \" $2 \" in \" $$ \"|\" $t \"|\" $g \") continue ;; esac\n"
            + "    return 0\n"
            + "  done\n"
            + "  return 1\n"
            + "}\n"
            + "while IFS=' ' read -r verb a b; do\n"
            + "  case \"$verb\" in\n"
            + "  arm)\n"
            + "    disarm\n"
            + "    armed=1\n"
            + "    (\n"
            + "      s=\n"
            + "      trap 'if [ -n \"$s\" ]; then kill -KILL \"$s\" 2>/dev/null; wait \"$s\" 2>/dev/null; fi; exit 0' USR1\n"
            + "      \"$sleep\" \"$a\" & s=$!; wait \"$s\"\n"
            + "      kill -TERM 0 2>/dev/null\n"
            + "      \"$sleep\" \"$b\" & s=$!; wait \"$s\"\n"
            + "      kill -KILL 0 2>/dev/null\n"
            + "    ) &\n"
            + "    t=$!\n"
            + "    ;;\n"
            + "  guard)\n"
            + "    armed=1\n"
            + "    ;;\n"
            + "  done)\n"
            + "    disarm\n"
            + "    exit 0\n"
            + "    ;;\n"
            + "  esac\n"
            + "done\n"
            + "[ -n \"$armed\" ] || exit 0\n"
            + "kill -TERM 0 2>/dev/null\n"
            + "(\"$sleep\" \"$grace\"; kill -KILL 0 2>/dev/null) &\n"
            + "g=$!\n"
            + "if ours; then\n"
            + "  while others; do \"$sleep\" 0.05; done\n"
            + "  kill -KILL 0 2>/dev/null\n"
            + "fi\n"
            + "wait \"$g\"\n";

    private final int pid;
    private final long startTicks;
    private int fd;
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private volatile boolean dismissed;
    /** System.nanoTime() at which the armed timer sends SIGKILL to the group (itself included); MAX_VALUE if never armed. */
    private volatile long killAtNanos = Long.MAX_VALUE;

    private boolean reaped; // guarded by this

    private Sentinel(int pid, long startTicks, int fd) {
        this.pid = pid;
        this.startTicks = startTicks;
        this.fd = fd;
    }

    /**
     * Starts a sentinel in a new process group that it leads.
     *
     * @param graceNanos from SIGTERM to SIGKILL when the JVM dies (an armed timer may kill sooner)
     * @param keepIgnored signals to leave ignored (see {@link Spawner#spawn})
     */
    static Sentinel start(long graceNanos, long keepIgnored) throws Spawner.SpawnException {
        String sleep = TrustedProgram.find("sleep")
                .orElseThrow(() -> new Spawner.SpawnException(
                        Errno.ENOENT,
                        "no sleep(1) that only root can replace in "
                                + String.join(" or ", TrustedProgram.SYSTEM_DIRECTORIES)
                                + " (the caller's PATH is never used); install coreutils or BusyBox there"));
        int[] fds = new int[2];
        if (LibcProcesses.pipe2(fds, LibcFiles.O_CLOEXEC) != 0) {
            int errno = Errno.last();
            throw new Spawner.SpawnException(errno, "pipe2 failed: " + Errno.describe(errno));
        }
        int pid;
        try {
            List<byte[]> argv = List.of(
                    bytes("/bin/sh"),
                    bytes("-c"),
                    bytes(SCRIPT),
                    bytes("interlock-sentinel"),
                    bytes(seconds(graceNanos)),
                    bytes(sleep));
            // An empty environment: nothing of the caller's (PATH, ENV, exported shell functions) reaches the script.
            Spawner.Environment none = Spawner.Environment.only(List.of());
            pid = Spawner.spawn(argv, none.envp, 0, new int[][] {{fds[0], 0}}, 3, keepIgnored);
        } catch (Spawner.SpawnException | RuntimeException e) {
            LibcFiles.close(fds[1]);
            throw e;
        } finally {
            LibcFiles.close(fds[0]);
        }
        // A full pipe (a stopped sentinel) must never block the JVM: the line is then dropped.
        LibcFiles.fcntl(fds[1], LibcFiles.F_SETFL, LibcFiles.O_NONBLOCK);
        // Our child cannot be reaped, so its pid cannot be reused, before we wait for it.
        long start = ProcessIdentity.startTicks(pid).orElse(-1);
        Sentinel s = new Sentinel(pid, start, fds[1]);
        Thread reaper = new Thread(s::reap, "interlock-sentinel-reaper");
        reaper.setDaemon(true);
        reaper.start();
        log.debug("sentinel pid {} leads the command's process group", pid);
        return s;
    }

    /**
     * Waits for the sentinel to end without reaping it (waitid with WNOWAIT): until {@link #close()}
     * reaps it, its pid, which is also the command's process group id, cannot be reused, so
     * signalling the group can never reach an unrelated one.
     */
    private void reap() {
        Memory info = new Memory(LibcProcesses.SIGINFO_SIZE);
        while (true) {
            info.clear();
            int r = LibcProcesses.waitid(LibcProcesses.P_PID, pid, info, LibcProcesses.WEXITED | LibcProcesses.WNOWAIT);
            if (r == 0) {
                int code = info.getInt(LibcProcesses.SI_CODE);
                int status = info.getInt(LibcProcesses.SI_STATUS);
                // As a wait status: exit code in bits 8..15, or the signal in bits 0..6.
                exit.complete(code == LibcProcesses.CLD_EXITED ? (status & 0xff) << 8 : status & 0x7f);
                return;
            }
            if (Errno.last() != Errno.EINTR) {
                exit.complete(-1);
                return;
            }
        }
    }

    /** The sentinel's pid, which is also the command's process group id. */
    int pid() {
        return pid;
    }

    /** Start time of the sentinel in clock ticks since boot, or -1 if unknown. */
    long startTicks() {
        return startTicks;
    }

    /** The sentinel's exit, once it exited (a wait status, or -1 if it could not be read). */
    CompletableFuture<Integer> exit() {
        return exit;
    }

    /** True once {@link #dismiss()} or {@link #close()} was called: an exit after that is expected. */
    boolean dismissed() {
        return dismissed;
    }

    /**
     * The sentinel's wait status if it has died (its timer ran out, it was killed, or it was
     * dismissed), else empty. One that {@code /proc} shows dead is waited for, briefly, so that
     * the answer does not depend on whether its reaper thread has run yet.
     */
    OptionalInt died() {
        if (!exit.isDone() && !ProcessGroups.dead(pid)) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(exit.get(5, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return OptionalInt.of(-1);
        } catch (ExecutionException | TimeoutException e) {
            return OptionalInt.of(-1);
        }
    }

    /** Arms (or re-arms) the timer: SIGTERM to the group in {@code termNanos}, SIGKILL in {@code killNanos}. */
    synchronized void arm(long termNanos, long killNanos) {
        long term = Math.max(0, termNanos);
        long kill = Math.max(term, killNanos);
        killAtNanos = System.nanoTime() + kill;
        send("arm " + seconds(term) + " " + seconds(kill - term) + "\n");
    }

    /**
     * True if the armed timer's SIGKILL is due (give or take the shell's start of sleep(1)): a
     * sentinel found killed by SIGKILL then was most likely killed by its own timer, with the
     * command's group, because the lease was not renewed in time.
     */
    boolean timerRanOut() {
        long at = killAtNanos;
        return at != Long.MAX_VALUE && System.nanoTime() - at >= -TimeUnit.MILLISECONDS.toNanos(100);
    }

    /** Guards the command from now on, with no timer: only the JVM's death stops it. */
    synchronized void guard() {
        send("guard\n");
    }

    /** Disarms the timer and lets the sentinel exit (the command is over); waits for it (bounded). */
    void dismiss() {
        dismissed = true;
        synchronized (this) {
            send("done\n");
        }
        try {
            exit.get(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            log.debug("sentinel {} did not exit in time", pid);
        }
    }

    /** Marks the sentinel's exit as expected (the JVM killed its group itself). */
    void expectExit() {
        dismissed = true;
    }

    private void send(String line) {
        if (fd < 0) {
            return;
        }
        byte[] b = bytes(line);
        long n = LibcFiles.write(fd, b, b.length);
        if (n != b.length) {
            log.debug(
                    "sentinel {} did not take '{}' ({})",
                    pid,
                    line.trim(),
                    n < 0 ? Errno.describeLast() : "a short write");
        }
    }

    private void closePipe() {
        if (fd >= 0) {
            LibcFiles.close(fd);
            fd = -1;
        }
    }

    /** Dismisses the sentinel if that was not done, and reaps it (idempotent). */
    @Override
    public void close() {
        if (!dismissed) {
            dismiss();
        }
        synchronized (this) {
            closePipe();
            if (reaped) {
                return;
            }
            reaped = true;
        }
        if (!exit.isDone()) {
            LibcProcesses.kill(pid, LibcProcesses.SIGKILL); // it did not take 'done' in time; only it, never the group
        }
        LibcProcesses.waitpid(pid, new int[1], 0);
    }

    /** Seconds with millisecond precision, as sleep(1) of GNU coreutils and BusyBox take them. */
    static String seconds(long nanos) {
        long ms = Math.max(0, TimeUnit.NANOSECONDS.toMillis(nanos));
        return String.format(Locale.ROOT, "%d.%03d", ms / 1000, ms % 1000);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
