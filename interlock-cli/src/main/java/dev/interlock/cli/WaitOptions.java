package dev.interlock.cli;

import dev.interlock.HolderInfo;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.internal.DefaultLockSpace;
import dev.interlock.internal.LockNames;
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
    @Option(names = {"-n", "--no-wait"}, description = "Do not wait: if the lock is busy, exit at once with the conflict code.")
    boolean noWait;

    @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = Durations.class,
            description = "Wait at most DURATION for the lock, then exit with the conflict code (-w 0 is -n).")
    Duration wait;

    @Option(names = {"-E", "--conflict-exit-code"}, paramLabel = "N", converter = RunCommand.ExitCodeConverter.class,
            description = "Exit status (0-255) when the lock is busy or the wait runs out. Default: ${DEFAULT-VALUE}.")
    int conflictExitCode = ExitCodes.CONFLICT;

    @Option(names = {"-q", "--quiet"}, description = "Say nothing about waiting or conflicts (errors are still reported).")
    boolean quiet;

    /** The message of the usage error if -n and -w are both given, else null. */
    String conflict() {
        return noWait && wait != null ? "-n/--no-wait and -w/--wait exclude each other" : null;
    }

    /**
     * Takes the lock as these options say: at once if it is free; else, with {@code -n} (or
     * {@code -w 0}), says who holds it and gives up; else waits (at most {@code -w}), saying once,
     * after a second, who holds it. Empty if the command should exit with {@link #conflictExitCode}.
     */
    Optional<Lease> acquire(LockSpace space, LockRequest request, String name, PrintWriter err) {
        try {
            return Optional.of(request.acquire(Duration.ZERO));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException(ExitCodes.SIGNAL_BASE + 2, "interrupted while trying " + LockNames.quote(name));
        } catch (LockTimeoutException busy) {
            if (noWait || (wait != null && wait.isZero())) {
                if (!quiet) {
                    err.println("interlock: " + LockNames.quote(name) + " is busy (" + DefaultLockSpace.describe(busy.blockers()) + ")");
                }
                return Optional.empty();
            }
            return waitFor(space, request, name, err);
        } catch (LockBackendException failed) {
            if (noWait || (wait != null && wait.isZero()) || !failed.isTransient()) {
                throw failed;
            }
            // A fault at the first try: the wait rides it out as it would any later one (docs/cli.md).
            return waitFor(space, request, name, err);
        }
    }

    private Optional<Lease> waitFor(LockSpace space, LockRequest request, String name, PrintWriter err) {
        Thread notice = null;
        if (!quiet) {
            notice = new Thread(() -> {
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    return;
                }
                String who;
                try {
                    who = holders(space, name);
                } catch (RuntimeException e) {
                    who = "holder unknown";
                }
                err.println("interlock: waiting for " + LockNames.quote(name) + " (" + who + ")"
                        + (wait != null ? " up to " + Durations.format(wait) : ""));
                err.flush();
            }, "interlock-notice");
            notice.setDaemon(true);
            notice.start();
        }
        try {
            return Optional.of(wait == null ? request.acquire() : request.acquire(wait));
        } catch (LockTimeoutException e) {
            if (!quiet) {
                err.println("interlock: gave up: " + e.getMessage());
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

    /** Who holds {@code name} or is queued before us, from a fresh look at the lock. */
    private static String holders(LockSpace space, String name) {
        LockInfo info = space.status(name);
        if (info.isFree() && info.queued().isEmpty()) {
            return "it was just released";
        }
        List<HolderInfo> all = new ArrayList<>(info.holders());
        all.addAll(info.queued());
        return DefaultLockSpace.describe(all);
    }
}
