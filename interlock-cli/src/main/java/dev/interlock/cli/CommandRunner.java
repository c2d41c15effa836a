package dev.interlock.cli;

import dev.interlock.LockLostException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sun.misc.Signal;

/**
 * Runs the command of {@code interlock run} while the lock is held, and watches over it.
 *
 * <ol>
 *   <li>For a kernel lock ({@code flock:}) the child inherits the locked descriptor (as fd 3), so
 *       it keeps the lock even if {@code interlock} is killed with SIGKILL, exactly like the child
 *       of flock(1). Every other descriptor of the JVM is closed in the child.</li>
 *   <li>For leases, which die with the JVM, a <em>sentinel</em> {@code /bin/sh} is started first,
 *       reading a pipe from the JVM; the command joins the sentinel's process group. If the JVM
 *       dies, the pipe closes and the sentinel sends SIGTERM, then SIGKILL, to the group, so the
 *       command never goes on running without the lock. The sentinel ignores the signals meant
 *       for the command.</li>
 *   <li>The command leads (or joins) its own process group. On a terminal where we are in the
 *       foreground, the group gets the terminal for the command's life.</li>
 *   <li>SIGINT, SIGTERM and SIGHUP sent to {@code interlock} are forwarded to the group.</li>
 *   <li>If the lock is lost, the group gets SIGTERM, then SIGKILL after a grace period.</li>
 * </ol>
 */
final class CommandRunner implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CommandRunner.class);
    private static final String SENTINEL_SCRIPT = "trap '' HUP INT QUIT TERM TSTP TTIN TTOU\n"
            + "IFS= read -r line\n"
            + "[ \"$line\" = done ] && exit 0\n"
            + "kill -TERM 0 2>/dev/null\n"
            + "sleep \"$1\"\n"
            + "kill -KILL 0 2>/dev/null\n";
    static final String[] FORWARDED = {"INT", "TERM", "HUP"};

    private final PrintWriter err;
    private final Duration killGrace;
    private final int sigTerm = new Signal("TERM").getNumber();
    private final int sigKill = new Signal("KILL").getNumber();
    private final int sigCont = new Signal("CONT").getNumber();
    private final int sigStop = new Signal("STOP").getNumber();

    private int pgid = -1; // guarded by this
    private int pendingSignal; // guarded by this: received before the command's group existed
    private LockLostException lost; // guarded by this
    private volatile boolean exited;
    private volatile int signalAfterExit;
    private volatile Thread waiter;
    private boolean interactive;
    private int ourPgrp;
    private int sentinelPid = -1;
    private int sentinelFd = -1;

    CommandRunner(PrintWriter err, Duration killGrace) {
        this.err = err;
        this.killGrace = killGrace;
    }

    /**
     * Starts the command and waits for it.
     *
     * @param argv the command, raw bytes
     * @param env the child's environment
     * @param lockFd descriptor the child must inherit to hold the lock, if any
     * @param sentinel whether to start a sentinel (leases that die with the JVM)
     * @return the command's status as a shell reports it (128+N if killed by signal N)
     * @throws Spawner.SpawnException if the command could not be started
     */
    int run(List<byte[]> argv, Spawner.Environment env, OptionalInt lockFd, boolean sentinel) throws Spawner.SpawnException {
        long keepIgnored = Spawner.ignoredAtStart();
        int sigTtou = new Signal("TTOU").getNumber();
        keepIgnored &= ~(1L << (sigTtou - 1));
        ourPgrp = Posix.getpgrp();
        interactive = Posix.isatty(0) == 1 && Posix.tcgetpgrp(0) == ourPgrp;
        if (interactive) {
            // We hand the terminal to the command and take it back from the background: don't get stopped for it.
            Posix.signal(sigTtou, Posix.SIG_IGN);
        }
        // From here on SIGINT/SIGTERM/SIGHUP are forwarded, not fatal: one that arrives before the
        // command exists is kept and forwarded as soon as it does.
        for (String name : FORWARDED) {
            forward(name);
        }
        int joinGroup = 0;
        if (sentinel) {
            joinGroup = startSentinel(keepIgnored);
        }
        int[][] dups = lockFd.isPresent() ? new int[][] {{lockFd.getAsInt(), 3}} : new int[0][];
        int closeFrom = lockFd.isPresent() ? 4 : 3;
        int pid = Spawner.spawn(argv, env.envp, joinGroup, dups, closeFrom, keepIgnored);
        int group = joinGroup != 0 ? joinGroup : pid;
        LockLostException lostEarly;
        int early;
        synchronized (this) {
            pgid = group;
            lostEarly = lost;
            early = pendingSignal;
        }
        log.debug("started pid {} in process group {}", pid, group);
        if (interactive) {
            Posix.tcsetpgrp(0, group);
            Posix.kill(-group, sigCont); // in case it touched the terminal before it was its own
        }
        if (early != 0) {
            log.debug("forwarding SIG{} received while starting the command", early);
            Posix.kill(-group, early);
        }
        if (lostEarly != null) {
            terminate(group);
        }
        CompletableFuture<Integer> status = new CompletableFuture<>();
        Thread reaper = new Thread(() -> reap(pid, group, status), "interlock-reaper");
        reaper.setDaemon(true);
        reaper.start();
        waiter = Thread.currentThread();
        int st = awaitUninterruptibly(status);
        exited = true;
        if (interactive) {
            Posix.tcsetpgrp(0, ourPgrp);
        }
        synchronized (this) {
            if (lost != null) {
                Posix.kill(-group, sigKill); // whatever the command left running in its group
            }
        }
        return Posix.shellStatus(st);
    }

    private static int awaitUninterruptibly(CompletableFuture<Integer> f) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw new IllegalStateException("waiting for the command failed", e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void reap(int pid, int group, CompletableFuture<Integer> status) {
        int[] st = new int[1];
        while (true) {
            int r = Posix.waitpid(pid, st, interactive ? Posix.WUNTRACED : 0);
            if (r == -1) {
                int errno = Posix.errno();
                if (errno == Posix.EINTR) {
                    continue;
                }
                status.completeExceptionally(new IllegalStateException("waitpid(" + pid + ") failed: " + Posix.strerror(errno)));
                return;
            }
            if (Posix.stopped(st[0])) {
                if (interactive) {
                    // Ctrl-Z: take the terminal back and stop too, so the shell sees a stopped job; on fg, resume it.
                    Posix.tcsetpgrp(0, ourPgrp);
                    Posix.kill(Posix.getpid(), sigStop);
                    Posix.tcsetpgrp(0, group);
                    Posix.kill(-group, sigCont);
                }
                continue;
            }
            status.complete(st[0]);
            return;
        }
    }

    private void forward(String name) {
        try {
            Signal.handle(new Signal(name), s -> {
                int g;
                synchronized (this) {
                    g = pgid;
                    if (g <= 0) {
                        pendingSignal = s.getNumber();
                    }
                }
                if (!exited && g > 0) {
                    log.debug("forwarding SIG{} to process group {}", name, g);
                    Posix.kill(-g, s.getNumber());
                } else if (exited) {
                    signalAfterExit = s.getNumber();
                    Thread w = waiter;
                    if (w != null) {
                        w.interrupt();
                    }
                }
            });
        } catch (IllegalArgumentException e) {
            log.debug("cannot handle SIG{}: {}", name, e.getMessage()); // ignored at start (nohup): stays ignored
        }
    }

    /** A signal received after the command ended (during --hold-at-least), or 0. */
    int signalAfterExit() {
        return signalAfterExit;
    }

    /** The lease listener: stop the command because the lock is gone. */
    void lost(LockLostException e) {
        int g;
        synchronized (this) {
            if (lost != null) {
                return;
            }
            lost = e;
            g = pgid;
        }
        if (exited) {
            err.println("interlock: warning: " + e.getMessage());
            err.flush();
            return;
        }
        err.println("interlock: " + e.getMessage());
        err.println("interlock: stopping the command: SIGTERM to its process group, SIGKILL after "
                + Durations.format(killGrace));
        err.flush();
        if (g > 0) {
            terminate(g);
        }
    }

    synchronized boolean wasLost() {
        return lost != null;
    }

    private void terminate(int group) {
        Posix.kill(-group, sigTerm);
        Thread killer = new Thread(() -> {
            try {
                Thread.sleep(killGrace.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            if (!exited) {
                log.debug("grace period over: SIGKILL to process group {}", group);
                Posix.kill(-group, sigKill);
            }
        }, "interlock-killer");
        killer.setDaemon(true);
        killer.start();
    }

    private int startSentinel(long keepIgnored) throws Spawner.SpawnException {
        int[] fds = new int[2];
        if (Posix.pipe2(fds, Posix.O_CLOEXEC) != 0) {
            int errno = Posix.errno();
            throw new Spawner.SpawnException(errno, "pipe2 failed: " + Posix.strerror(errno));
        }
        String grace = String.valueOf(Math.max(1, killGrace.toSeconds()));
        List<byte[]> argv = List.of(bytes("/bin/sh"), bytes("-c"), bytes(SENTINEL_SCRIPT), bytes("interlock-sentinel"),
                bytes(grace));
        try {
            sentinelPid = Spawner.spawn(argv, Posix.environ(), 0, new int[][] {{fds[0], 0}}, 3, keepIgnored);
        } finally {
            Posix.close(fds[0]);
        }
        sentinelFd = fds[1];
        log.debug("sentinel pid {} watches the command's process group", sentinelPid);
        return sentinelPid;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Dismisses the sentinel (the lock is released or about to be). */
    @Override
    public void close() {
        if (sentinelFd >= 0) {
            byte[] done = bytes("done\n");
            Posix.write(sentinelFd, done, done.length);
            Posix.close(sentinelFd);
            sentinelFd = -1;
            Posix.waitpid(sentinelPid, new int[1], 0);
        }
    }
}
