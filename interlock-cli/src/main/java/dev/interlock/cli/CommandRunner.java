package dev.interlock.cli;

import dev.interlock.LockLostException;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcProcesses;
import dev.interlock.spi.support.Durations;
import dev.interlock.spi.support.Log;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * Runs the command of {@code interlock run} while the lock is held, and watches over it.
 *
 * <ol>
 *   <li>For a kernel lock ({@code flock:}) the child inherits the locked descriptor (as fd 3), so
 *       it keeps the lock even if {@code interlock} is killed with SIGKILL, exactly like the child
 *       of flock(1). Every other descriptor of the JVM is closed in the child.</li>
 *   <li>For leases, which die with the JVM, a {@link Sentinel} is started before the lock is
 *       requested, and the command joins its process group. It stops the group if the JVM dies
 *       or stops renewing (its timer is re-armed after every renewal), and the lock is held on
 *       its behalf, so on this host it counts as held while anything in the group can run. If
 *       the sentinel itself dies, nothing would guard the command any more: it is stopped.</li>
 *   <li>The command leads (or joins) its own process group. On a terminal where we are in the
 *       foreground, the group gets the terminal for the command's life.</li>
 *   <li>SIGINT, SIGTERM and SIGHUP sent to {@code interlock} are forwarded to the group.</li>
 *   <li>If the lock is lost, the group gets SIGTERM, then SIGKILL after a grace period.</li>
 *   <li>Under a sentinel, or for {@code update} ({@link #stoppingLeftovers()}), processes the
 *       command leaves in its group when it exits get SIGTERM, then SIGKILL after the grace
 *       period, before the lock is released (and before {@code update} commits): they would run
 *       without it (and write into the committed file).</li>
 * </ol>
 */
final class CommandRunner implements AutoCloseable, Consumer<LockLostException> {
    private static final Log log = Log.of(CommandRunner.class);
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
    private boolean lostAfterExit; // guarded by this: the loss was told after the command's end (a warning)
    private volatile boolean exited;
    private volatile int signalAfterExit;
    private volatile Thread waiter;
    private boolean interactive;
    private int ourPgrp;
    private Sentinel sentinel;
    private String guardGone; // guarded by this: why the command was stopped though the lock was not lost
    private boolean stopLeftoversAlways;

    CommandRunner(PrintWriter err, Duration killGrace) {
        this.err = err;
        this.killGrace = killGrace;
    }

    /**
     * Stops what the command leaves in its process group even without a sentinel (with a kernel
     * lock, which {@code run} lets such processes keep through fd 3): {@code update}'s COMMAND
     * writes into the file about to be committed, and nothing of it may outlive the commit.
     */
    CommandRunner stoppingLeftovers() {
        stopLeftoversAlways = true;
        return this;
    }

    /**
     * Starts the command and waits for it.
     *
     * @param argv the command, raw bytes
     * @param env the child's environment
     * @param lockFd descriptor the child must inherit to hold the lock, if any
     * @return the command's status as a shell reports it (128+N if killed by signal N)
     * @throws Spawner.SpawnException if the command could not be started
     */
    int run(List<byte[]> argv, Spawner.Environment env, OptionalInt lockFd) throws Spawner.SpawnException {
        int[][] dups = lockFd.isPresent() ? new int[][] {{lockFd.getAsInt(), 3}} : new int[0][];
        return run(argv, env, dups, lockFd.isPresent() ? 4 : 3);
    }

    /**
     * Starts the command with the descriptors {@code dups} ({from, to} pairs) and every other
     * descriptor from {@code closeFrom} up closed, and waits for it, as {@link #run(List, Spawner.Environment, OptionalInt)}.
     */
    int run(List<byte[]> argv, Spawner.Environment env, int[][] dups, int closeFrom) throws Spawner.SpawnException {
        long keepIgnored = keepIgnored();
        int sigTtou = new Signal("TTOU").getNumber();
        ourPgrp = LibcProcesses.getpgrp();
        interactive = LibcProcesses.isatty(0) == 1 && LibcProcesses.tcgetpgrp(0) == ourPgrp;
        if (interactive) {
            // We hand the terminal to the command and take it back from the background: don't get stopped for it.
            LibcProcesses.signal(sigTtou, LibcProcesses.SIG_IGN);
        }
        // From here on SIGINT/SIGTERM/SIGHUP are forwarded, not fatal: one that arrives before the
        // command exists is kept and forwarded as soon as it does.
        for (String name : FORWARDED) {
            forward(name);
        }
        int joinGroup = sentinel != null ? sentinel.pid() : 0;
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
            LibcProcesses.tcsetpgrp(0, group);
            LibcProcesses.kill(-group, sigCont); // in case it touched the terminal before it was its own
        }
        if (early != 0) {
            log.debug("forwarding SIG{} received while starting the command", early);
            LibcProcesses.kill(-group, early);
        }
        if (lostEarly != null) {
            terminate(group);
        }
        if (sentinel != null) {
            Sentinel s = sentinel;
            s.exit().thenAccept(st -> {
                if (!s.dismissed() && !exited) {
                    guardGone(s, st, group);
                }
            });
        }
        // A FutureTask, not a CompletableFuture: that one sets up the fork-join pool's statics when it
        // loads (a millisecond of a short command's start). Here and below, classes rather than
        // lambdas on the path of every run: on JDK 17 each lambda's first call links it through
        // java.lang.invoke (with the run's other lambdas, a tenth of the main thread's CPU).
        FutureTask<Integer> status = new FutureTask<>(new Callable<Integer>() {
            @Override
            public Integer call() {
                return reap(pid, group);
            }
        });
        Thread reaper = new Thread(status, "interlock-reaper");
        reaper.setDaemon(true);
        reaper.start();
        waiter = Thread.currentThread();
        int st = awaitUninterruptibly(status);
        exited = true;
        if (interactive) {
            LibcProcesses.tcsetpgrp(0, ourPgrp);
        }
        boolean stopped;
        synchronized (this) {
            stopped = lost != null || guardGone != null;
        }
        OptionalInt guardDied = sentinel == null ? OptionalInt.empty() : sentinel.died();
        if (guardDied.isPresent() && (!sentinel.dismissed() || diedOfItsTimer(sentinel, guardDied.getAsInt()))) {
            // The sentinel died before its death was reported here (its timer ran out while this JVM
            // was stopped, most likely, and killed the group with it): what is left of the group, its
            // timer among it, no longer its child, is the sentinel's doing, not the command's leftovers.
            stopped |= guardGone(sentinel, guardDied.getAsInt(), group);
        }
        if (stopped || guardDied.isPresent()) {
            if (sentinel != null) {
                sentinel.expectExit();
            }
            LibcProcesses.kill(-group, sigKill); // whatever the command left running in its group
        } else if (sentinel != null || stopLeftoversAlways) {
            stopLeftovers(group);
        }
        return ExitCodes.shellStatus(st);
    }

    /** Signals ignored at start that the command (and the sentinel) keep ignored; never SIGTTOU, which is ours. */
    private static long keepIgnored() {
        int sigTtou = new Signal("TTOU").getNumber();
        return Spawner.ignoredAtStart() & ~(1L << (sigTtou - 1));
    }

    /**
     * Starts the sentinel that the command will join (lease-based locks, which die with this JVM).
     * Called before the lock is requested, so that the lock can be held on its behalf.
     */
    Sentinel startSentinel() throws Spawner.SpawnException {
        sentinel = Sentinel.start(killGrace.toNanos(), keepIgnored());
        return sentinel;
    }

    /** The sentinel, if one was started. */
    Sentinel sentinel() {
        return sentinel;
    }

    /**
     * The command exited and the lock is still ours: processes it left in its group would run
     * without the lock once it is released, so they get SIGTERM, then SIGKILL after the grace
     * period. The sentinel, if any, keeps guarding them meanwhile, and is dismissed last. Without
     * a sentinel the group id is the reaped command's pid, which stays out of reuse while a
     * leftover is in the group: it is signalled only after one was seen there.
     */
    private void stopLeftovers(int group) {
        long guard = sentinel != null ? sentinel.pid() : 0; // pid 0 is no process in /proc
        List<Long> left = ProcessGroups.leftovers(group, guard);
        if (!left.isEmpty()) {
            err.println("interlock: stopping what COMMAND left running in its process group (pid"
                    + (left.size() > 1 ? "s " : " ") + join(left) + "): it would run without the lock");
            err.flush();
            LibcProcesses.kill(-group, sigTerm);
            long until = System.nanoTime() + killGrace.toNanos();
            while (!left.isEmpty() && System.nanoTime() - until < 0) {
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
                left = ProcessGroups.leftovers(group, guard);
            }
            if (!left.isEmpty()) {
                log.debug("grace period over: SIGKILL to process group {}", group);
                if (sentinel != null) {
                    sentinel.expectExit();
                }
                LibcProcesses.kill(-group, sigKill);
                awaitGroupGone(group);
                return;
            }
        }
        if (sentinel != null) {
            sentinel.dismiss();
        }
    }

    /**
     * Waits (bounded) until no process of {@code group} can run, so none can act after the
     * release. Zombies do not count: the sentinel, killed with the group, stays one until
     * {@link #close()} reaps it, and while this waited for it, a same-host {@code dir:} waiter
     * (for which a group of zombies is gone) took the lock before the release, so the release
     * reported it lost.
     */
    private static void awaitGroupGone(int group) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (LibcProcesses.kill(-group, 0) == 0
                && ProcessIdentity.groupCanRun(group)
                && System.nanoTime() - until < 0) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static String join(List<Long> pids) {
        StringBuilder sb = new StringBuilder();
        for (Long p : pids) {
            sb.append(sb.length() == 0 ? "" : ", ").append(p);
        }
        return sb.toString();
    }

    /**
     * The sentinel died while the command ran (or before its end was seen here): nothing would stop
     * the command if this JVM died, so it is stopped now. Returns true if the command counts as
     * stopped (exit 75): always, unless the command had ended and the sentinel died of something
     * other than its own timer.
     */
    private boolean diedOfItsTimer(Sentinel s, int status) {
        return status >= 0 && (status & 0x7f) == sigKill && s.timerRanOut();
    }

    private boolean guardGone(Sentinel s, int status, int group) {
        boolean ownTimer = diedOfItsTimer(s, status);
        String why = ownTimer
                ? "the lease was not renewed in time (was interlock stopped or starved?): the timer of the sentinel guarding the"
                        + " command (pid " + s.pid()
                        + ") ran out and killed the command's process group, the sentinel with it"
                : "the sentinel guarding the command (pid " + s.pid() + ") "
                        + (status >= 0 && (status & 0x7f) != 0 ? "was killed by signal " + (status & 0x7f) : "exited");
        synchronized (this) {
            if (guardGone != null || lost != null && !(ownTimer && lostAfterExit)) {
                return true; // told already: a loss told while the command ran says why it was stopped
            }
            if (exited && !ownTimer) {
                // The command ended on its own, under the lock; only what it left in its group is stopped.
                err.println(
                        "interlock: " + why + " after the command ended; stopping what is left of its process group");
                err.flush();
                return false;
            }
            guardGone = why;
        }
        if (ownTimer || exited) {
            err.println("interlock: " + why);
            err.flush();
            if (!exited) {
                terminate(group); // whatever is left of the group (nothing, normally)
            }
            return true;
        }
        err.println("interlock: " + why + "; nothing would stop the command if interlock died");
        err.println("interlock: stopping the command: SIGTERM to its process group, SIGKILL after "
                + Durations.format(killGrace));
        err.flush();
        terminate(group);
        return true;
    }

    private static int awaitUninterruptibly(FutureTask<Integer> f) {
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

    /** Waits for the command to end (not to stop): its status, as waitpid gives it. */
    private int reap(int pid, int group) {
        int[] st = new int[1];
        while (true) {
            int r = LibcProcesses.waitpid(pid, st, interactive ? LibcProcesses.WUNTRACED : 0);
            if (r == -1) {
                int errno = Errno.last();
                if (errno == Errno.EINTR) {
                    continue;
                }
                throw new IllegalStateException("waitpid(" + pid + ") failed: " + Errno.describe(errno));
            }
            if (ExitCodes.stopped(st[0])) {
                if (interactive) {
                    // Ctrl-Z: take the terminal back and stop too, so the shell sees a stopped job; on fg, resume it.
                    LibcProcesses.tcsetpgrp(0, ourPgrp);
                    LibcProcesses.kill(LibcProcesses.getpid(), sigStop);
                    LibcProcesses.tcsetpgrp(0, group);
                    LibcProcesses.kill(-group, sigCont);
                }
                continue;
            }
            return st[0];
        }
    }

    private void forward(String name) {
        try {
            Signal.handle(new Signal(name), new SignalHandler() {
                @Override
                public void handle(Signal s) {
                    forwarded(name, s);
                }
            });
        } catch (IllegalArgumentException e) {
            log.debug("cannot handle SIG{}: {}", name, e.getMessage()); // ignored at start (nohup): stays ignored
        }
    }

    private void forwarded(String name, Signal s) {
        int g;
        synchronized (this) {
            g = pgid;
            if (g <= 0) {
                pendingSignal = s.getNumber();
            }
        }
        if (!exited && g > 0) {
            log.debug("forwarding SIG{} to process group {}", name, g);
            LibcProcesses.kill(-g, s.getNumber());
        } else if (exited) {
            signalAfterExit = s.getNumber();
            Thread w = waiter;
            if (w != null) {
                w.interrupt();
            }
        }
    }

    /** A signal received after the command ended (during --hold-at-least), or 0. */
    int signalAfterExit() {
        return signalAfterExit;
    }

    /** The lease listener: stop the command because the lock is gone. */
    @Override
    public void accept(LockLostException e) {
        lost(e);
    }

    /** Stops the command because the lock is gone. */
    void lost(LockLostException e) {
        int g;
        synchronized (this) {
            if (lost != null) {
                return;
            }
            lost = e;
            g = pgid;
            lostAfterExit = exited;
        }
        if (exited) {
            err.println("interlock: warning: " + e.getMessage());
            err.flush();
            Sentinel s = sentinel;
            if (s != null && g > 0 && !s.dismissed()) {
                // Stopping what the command left behind: the lock is gone, so no grace any more.
                // The sentinel is not reaped yet, so the group id still names this group.
                s.expectExit();
                LibcProcesses.kill(-g, sigKill);
            }
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

    /** True if the command was stopped because the lock was lost or its sentinel died. */
    synchronized boolean wasLost() {
        return lost != null || guardGone != null;
    }

    private void terminate(int group) {
        LibcProcesses.kill(-group, sigTerm);
        Thread killer = new Thread(
                () -> {
                    try {
                        Thread.sleep(killGrace.toMillis());
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (!exited) {
                        log.debug("grace period over: SIGKILL to process group {}", group);
                        LibcProcesses.kill(-group, sigKill);
                    }
                },
                "interlock-killer");
        killer.setDaemon(true);
        killer.start();
    }

    /** Dismisses the sentinel if it is still there (the lock is released or about to be). */
    @Override
    public void close() {
        if (sentinel != null) {
            sentinel.close();
        }
    }
}
