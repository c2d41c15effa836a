package dev.interlock.cli;

import dev.interlock.HolderInfo;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.internal.DefaultLockSpace;
import dev.interlock.spi.support.Durations;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * How a command that takes a lock waits for it ({@code -n}, {@code -w}, {@code -E}, {@code -q}),
 * the same options with the same meaning on {@code run} and {@code update}, and the waiting itself.
 */
final class WaitOptions {
    @Option(
            names = {"-n", "--no-wait"},
            description = "Do not wait: if the lock is busy, exit at once with the conflict code.")
    boolean noWait;

    @Option(
            names = {"-w", "--wait"},
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Wait at most DURATION for the lock, then exit with the conflict code (-w 0 is -n).")
    Duration wait;

    @Option(
            names = {"-E", "--conflict-exit-code"},
            paramLabel = "N",
            converter = RunCommand.ExitCodeConverter.class,
            description = "Exit status (0-255) when the lock is busy or the wait runs out. Default: ${DEFAULT-VALUE}.")
    int conflictExitCode = ExitCodes.CONFLICT;

    @Option(
            names = {"-q", "--quiet"},
            description = "Say nothing about waiting or conflicts (errors are still reported).")
    boolean quiet;

    /** True if the lock is tried once, without waiting: {@code -n}, or {@code -w 0}. */
    private boolean tryOnly() {
        return noWait || (wait != null && wait.isZero());
    }

    /** The message of the usage error if -n and -w are both given, else null. */
    String conflict() {
        return noWait && wait != null ? "-n/--no-wait and -w/--wait exclude each other" : null;
    }

    /**
     * Takes the lock as these options say: at once if it is free; else, with {@code -n} (or
     * {@code -w 0}), says who holds it and gives up; else waits (at most {@code -w}), saying once,
     * after a second, who holds it ({@code sentinelPid}: the sentinel on whose behalf this process
     * waits, or -1). {@code limit} is the request's semaphore limit (0 for a lock): a permit's
     * messages list the permit holders ({@link PermitHolders}). Empty if the command should exit
     * with {@link #conflictExitCode}.
     */
    Optional<Lease> acquire(
            LockSpace space, LockRequest request, String name, int limit, PrintWriter err, long sentinelPid) {
        try {
            return Optional.of(request.acquire(Duration.ZERO));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.SIGNAL_BASE + 2, "interrupted while trying " + LockNames.quote(name));
        } catch (LockTimeoutException busy) {
            if (tryOnly()) {
                if (!quiet) {
                    err.println("interlock: " + LockNames.quote(name)
                            + (limit > 0
                                    ? " has " + PermitHolders.describe(limit, busy.blockers())
                                    : " is busy (" + DefaultLockSpace.describe(busy.blockers()) + ")"));
                }
                return Optional.empty();
            }
            return waitFor(space, request, name, limit, err, sentinelPid);
        } catch (LockBackendException failed) {
            if (tryOnly() || !failed.isTransient()) {
                throw failed;
            }
            // A fault at the first try: the wait rides it out as it would any later one (docs/cli.md).
            return waitFor(space, request, name, limit, err, sentinelPid);
        }
    }

    private Optional<Lease> waitFor(
            LockSpace space, LockRequest request, String name, int limit, PrintWriter err, long sentinelPid) {
        Thread notice = null;
        if (!quiet) {
            notice = new Thread(
                    () -> {
                        try {
                            Thread.sleep(1000);
                        } catch (InterruptedException e) {
                            return;
                        }
                        String who;
                        try {
                            who = holders(space, name, limit, sentinelPid);
                        } catch (RuntimeException e) {
                            who = "holder unknown";
                        }
                        err.println("interlock: waiting for " + (limit > 0 ? "a permit of " : "")
                                + LockNames.quote(name) + " (" + who + ")"
                                + (wait != null ? " up to " + Durations.format(wait) : ""));
                        err.flush();
                    },
                    "interlock-notice");
            notice.setDaemon(true);
            notice.start();
        }
        try {
            return Optional.of(wait == null ? request.acquire() : request.acquire(wait));
        } catch (LockTimeoutException e) {
            if (!quiet) {
                err.println("interlock: gave up: "
                        + (limit > 0
                                ? space.uri() + " - " + LockNames.quote(name) + " (a permit of " + limit
                                        + ") not acquired after " + Durations.format(e.waited()) + " ("
                                        + PermitHolders.describe(limit, e.blockers()) + ")"
                                : e.getMessage()));
            }
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.SIGNAL_BASE + 2, "interrupted while waiting for " + LockNames.quote(name));
        } finally {
            if (notice != null) {
                notice.interrupt();
            }
        }
    }

    /**
     * Who holds {@code name} or is queued before us, from a fresh look at the lock. Our own place
     * in the queue (this process's, or its sentinel's on whose behalf it waits) is not shown: it
     * used to name this very waiter as "a queued waiter goes first".
     */
    private static String holders(LockSpace space, String name, int limit, long sentinelPid) {
        LockInfo info = space.status(name);
        List<HolderInfo> all = new ArrayList<>(info.holders());
        String here = ProcessIdentity.current().host();
        for (HolderInfo q : info.queued()) {
            boolean us = q.host().map(here::equals).orElse(false)
                    && (q.pid() == ProcessHandle.current().pid() || q.pid() == sentinelPid);
            if (!us) {
                all.add(q);
            }
        }
        if (all.isEmpty()) {
            return "it was just released";
        }
        return limit > 0 ? PermitHolders.describe(limit, all) : DefaultLockSpace.describe(all);
    }
}
