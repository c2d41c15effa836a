package dev.interlock.cli;

import dev.interlock.Lease;
import dev.interlock.LimitMismatchException;
import dev.interlock.LockBackendException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Ticker;
import dev.interlock.internal.Leases;
import dev.interlock.spi.support.LockNames;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code interlock run [options] NAME -- COMMAND [ARG...]}. */
@Command(
        mixinStandardHelpOptions = true,
        name = "run",
        header = "Run COMMAND while holding the lock NAME.",
        customSynopsis = {
            "interlock run [-s] [-n | -w DURATION] [-E N] [-q] [--backend URI]",
            "              [--lease DURATION] [--hold-at-least DURATION]",
            "              NAME -- COMMAND [ARG...]"
        },
        description = {
            "",
            "Takes the lock (exclusive unless -s), runs COMMAND with its arguments (no",
            "shell) and releases the lock when COMMAND exits. Exits with COMMAND's status.",
            "By default it waits for the lock as long as it takes; -n gives up at once,",
            "-w after DURATION.",
            "",
            "COMMAND gets INTERLOCK_NAME, INTERLOCK_OWNER and INTERLOCK_TOKEN (the fencing",
            "token) in its environment and inherits stdin, stdout and stderr. It runs in",
            "its own process group; SIGINT, SIGTERM and SIGHUP sent to interlock are",
            "forwarded to that group.",
            "",
            "COMMAND never runs without the lock: if the lock is lost (lock file removed",
            "or replaced, lease not renewed), its process group gets SIGTERM, then SIGKILL",
            "after a grace period (10s, at most a tenth of the lease), and run exits with",
            "75. With flock: the command itself holds the lock (it inherits the locked",
            "file, as under flock(1)), so it keeps it even if interlock is killed. With",
            "lease-based backends a sentinel process stops the command's group before the",
            "lease can run out if interlock dies or stops renewing, and processes COMMAND",
            "leaves in its group are stopped before the lock is released.",
            "",
            "DURATION: 500ms, 30s, 5m, 1h, 1h30m, or seconds such as 2.5."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {
            "  # at most one report at a time; others wait",
            "  interlock run nightly-report -- ./report.sh --full",
            "  # a cron job that skips its turn if the previous run is still going",
            "  interlock run -n -E 0 -q sync -- rsync -a src/ dst/",
            "  # wait up to 5 minutes; tell 'busy' (3) from the command's own failures",
            "  interlock run -w 5m -E 3 import -- ./import.sh",
            "  # at most 3 imports at once across every host that shares the backend",
            "  interlock run --backend redis://redis.internal --limit 3 import -- ./import.sh",
            "  # readers share, a writer excludes them",
            "  interlock run -s catalog -- ./read-catalog.sh",
            "  # several hosts fire the same job: it runs once even if their clocks",
            "  # differ by up to a minute",
            "  interlock run -n --backend dir:/mnt/shared/locks --hold-at-least 1m \\",
            "      daily -- ./daily.sh",
            "  # interoperates with util-linux flock(1) on the same file",
            "  flock /var/lock/myapp/db -c ./migrate.sh   # excludes, and is excluded by:",
            "  interlock run --backend flock:/var/lock/myapp db -- ./backup.sh"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "  N:COMMAND's own exit status",
            "128+N:COMMAND was killed by signal N (143: SIGTERM)",
            "  1:the lock is busy (-n) or the wait ran out (-w); set with -E",
            " 64:usage error: bad option or DURATION, no '--' or no COMMAND, bad NAME or URI, a --limit other than NAME's",
            " 69:the backend is unusable (directory missing and not creatable, not writable, unsafe) or has no --limit",
            " 75:the lock was lost while COMMAND ran; COMMAND was stopped",
            "126:COMMAND could not be executed (permission denied, not executable)",
            "127:COMMAND was not found"
        })
final class RunCommand implements Callable<Integer> {
    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Option(
            names = {"-s", "--shared"},
            description = "Take a shared lock (many holders at once) instead of an exclusive one.")
    boolean shared;

    @Option(
            names = "--limit",
            paramLabel = "N",
            converter = LimitConverter.class,
            description = "Take one of N permits of a semaphore: run COMMAND when fewer than N others hold NAME."
                    + " Everyone must state the same N (docs/semaphores.md). Not with -s.")
    Integer limit;

    @Mixin
    WaitOptions waiting;

    @Mixin
    BackendOption backend;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Lease of lease-based backends (dir:, jdbc:, redis:), renewed while COMMAND"
                    + " runs. Default: the backend's (30s). Ignored by flock:, whose locks do not expire.")
    Duration lease;

    @Option(
            names = "--hold-at-least",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Keep the lock until DURATION after it was taken, even if COMMAND ends sooner"
                    + " (one run of a job fired on several hosts whose clocks differ).")
    Duration holdAtLeast;

    @Mixin
    Verbosity verbosity;

    @Parameters(index = "0", arity = "1", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Parameters(
            index = "1..*",
            arity = "0..*",
            paramLabel = "COMMAND",
            description = "The command and its arguments, after '--'.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        checkCommandLine();
        return execute(spec.commandLine().getOut(), spec.commandLine().getErr());
    }

    /**
     * Runs the command once its fields are set, by picocli ({@link #call}) or by {@link FastPath},
     * which leaves {@link #spec} null.
     */
    int execute(PrintWriter out, PrintWriter err) {
        BackendOption.checkName(name);
        try (LockSpace space = backend.open(top.env)) {
            boolean leaseBased = Leases.leaseBased(space);
            Duration leaseUsed = lease != null ? lease : Leases.defaultLease(space);
            Duration grace = killGrace(leaseBased ? leaseUsed : null);
            LockRequest request = space.lock(name).mode(shared ? Mode.SHARED : Mode.EXCLUSIVE);
            if (limit != null) {
                BackendOption.requireSemaphores(space);
                request.limit(limit);
            }
            if (lease != null) {
                try {
                    LeaseArgument.apply(request, lease);
                } catch (IllegalArgumentException e) {
                    throw usage("bad --lease: " + e.getMessage());
                }
            }
            try (CommandRunner runner = new CommandRunner(err, grace)) {
                if (leaseBased || Boolean.getBoolean("interlock.cli.sentinel")) {
                    Sentinel sentinel = startSentinel(runner);
                    if (leaseBased) {
                        Leases.onBehalfOf(request, sentinel.pid(), sentinel.startTicks());
                    }
                }
                request.onLost(runner); // not runner::lost: a class, not a lambda to link (CommandRunner)
                Optional<Lease> got = waiting.acquire(
                        space,
                        request,
                        name,
                        limit != null ? limit : 0,
                        err,
                        runner.sentinel() != null ? runner.sentinel().pid() : -1);
                if (got.isEmpty()) {
                    return waiting.conflictExitCode;
                }
                Lease held = got.get();
                long acquiredAt = System.nanoTime();
                try {
                    if (runner.sentinel() != null) {
                        if (leaseBased) {
                            armOnEveryRenewal(held, runner.sentinel(), grace);
                        } else {
                            runner.sentinel().guard();
                        }
                    }
                    return runUnder(held, runner, out, err, acquiredAt);
                } finally {
                    runner.close();
                    try {
                        held.close();
                    } catch (LockBackendException e) {
                        err.println("interlock: warning: " + e.getMessage());
                    }
                }
            }
        } catch (LockBackendException e) {
            throw new CliException(ExitCodes.UNAVAILABLE, e.getMessage(), e);
        } catch (LimitMismatchException e) {
            throw new CliException(ExitCodes.USAGE, e.getMessage(), e);
        }
    }

    private Sentinel startSentinel(CommandRunner runner) {
        try {
            return runner.startSentinel();
        } catch (Spawner.SpawnException e) {
            throw new CliException(
                    ExitCodes.OSERR, "cannot start the sentinel that guards COMMAND (/bin/sh): " + e.getMessage(), e);
        }
    }

    /**
     * Arms the sentinel's timer now and after every renewal, so that the command is stopped
     * before the lease can run out even if this JVM stops renewing without dying (SIGSTOP, a
     * long pause, a renewal hung on an unreachable backend): SIGTERM when the lease would be
     * declared lost, SIGKILL {@code grace} later (at most half the margin), which is still before
     * the deadline. A session lease ({@code zk:}) is armed from the deadline its session reports
     * each time it answers (until the first report nothing is armed), a quarter of the margin
     * after the loss point: a JVM that runs declares the loss itself at its session keeper's next
     * look, sooner than that, and stops the command as for any loss; the sentinel is for a JVM
     * that cannot. Its SIGKILL follows at most a quarter of the margin later, half the margin
     * before the session can expire.
     */
    private static void armOnEveryRenewal(Lease held, Sentinel sentinel, Duration grace) {
        Ticker ticker = Leases.ticker(held);
        boolean session = Leases.sessionHeld(held);
        Leases.onRenewed(held, deadline -> {
            if (deadline == Long.MAX_VALUE) {
                return;
            }
            long margin = Leases.lossMarginNanos(held);
            long now = ticker.read();
            long term = deadline - margin - now + (session ? margin / 4 : 0);
            sentinel.arm(term, term + Math.min(grace.toNanos(), session ? margin / 4 : margin / 2));
        });
    }

    private int runUnder(Lease lease, CommandRunner runner, PrintWriter out, PrintWriter err, long acquiredAt) {
        List<byte[]> env = List.of(
                ("INTERLOCK_NAME=" + name).getBytes(StandardCharsets.UTF_8),
                ("INTERLOCK_OWNER=" + lease.owner().id()).getBytes(StandardCharsets.UTF_8),
                ("INTERLOCK_TOKEN=" + lease.token()).getBytes(StandardCharsets.UTF_8));
        OptionalInt fd = lease.inheritableDescriptor();
        err.flush();
        out.flush();
        System.out.flush();
        System.err.flush();
        int status;
        try {
            status = runner.run(commandBytes(), new Spawner.Environment(env), fd);
        } catch (Spawner.SpawnException e) {
            throw new CliException(
                    e.exitCode(),
                    "cannot run " + LockNames.quote(command.get(0)) + ": "
                            + (e.exitCode() == ExitCodes.NOT_FOUND ? "not found in PATH (ENOENT)" : e.getMessage()),
                    e);
        }
        if (runner.wasLost()) {
            return ExitCodes.LOCK_LOST;
        }
        if (!lease.isValid()) {
            // The deadline passed before the loss could be declared (interlock itself was stopped or
            // starved): the sentinel stopped the command, or it ended on its own in a lease that ran out.
            err.println("interlock: the lease on " + LockNames.quote(name) + " ran out before interlock could renew it"
                    + " (was it stopped?); the command may have been stopped");
            err.flush();
            return ExitCodes.LOCK_LOST;
        }
        if (holdAtLeast != null) {
            long until = acquiredAt + holdAtLeast.toNanos();
            long left;
            while ((left = until - System.nanoTime()) > 0 && runner.signalAfterExit() == 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(left);
                } catch (InterruptedException e) {
                    // a signal: stop holding
                }
            }
            Thread.interrupted();
            if (runner.signalAfterExit() != 0) {
                return ExitCodes.SIGNAL_BASE + runner.signalAfterExit();
            }
        }
        return status;
    }

    /** The command's raw bytes when known (see {@link RawArgs}), else its UTF-8 encoding. */
    private List<byte[]> commandBytes() {
        List<byte[]> raw = top.rawArgs;
        if (raw != null && raw.size() >= command.size()) {
            return raw.subList(raw.size() - command.size(), raw.size());
        }
        List<byte[]> out = new ArrayList<>();
        for (String s : command) {
            out.add(s.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    /**
     * SIGTERM to SIGKILL when the lock is lost: 10s, and at most a tenth of the lease on
     * lease-based backends. A lease whose renewals fail is declared lost a fifth of the lease
     * before its deadline, so SIGKILL lands a tenth of the lease before it: before anyone else
     * can be granted the lock (docs/cli.md has the timeline).
     */
    static Duration killGrace(Duration lease) {
        Duration grace = Duration.ofMillis(Long.getLong("interlock.cli.killGraceMs", 10_000));
        if (lease != null && lease.dividedBy(10).compareTo(grace) < 0) {
            grace = lease.dividedBy(10);
        }
        return grace;
    }

    /** {@code --} present, NAME before it, a COMMAND after it. */
    private void checkCommandLine() {
        String synopsis = "interlock run [OPTIONS] NAME -- COMMAND [ARG...]";
        int after = AfterDash.count(spec, synopsis);
        if (command.size() > after) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(),
                    "unexpected argument " + LockNames.quote(command.get(0)) + " before '--': " + synopsis);
        }
        if (command.size() < after) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "the lock NAME must come before '--': " + synopsis);
        }
        if (waiting.conflict() != null) {
            throw usage(waiting.conflict());
        }
        if (limit != null && shared) {
            throw usage("--limit and -s/--shared exclude each other: a semaphore permit has one holder");
        }
    }

    /**
     * A usage error (exit 64): picocli's own exception when picocli parsed the line, else a
     * {@link CliException} that {@link Main#report} prints the same way.
     */
    private RuntimeException usage(String message) {
        if (spec != null) {
            return new CommandLine.ParameterException(spec.commandLine(), message);
        }
        return new CliException(ExitCodes.USAGE, message);
    }

    /** A semaphore limit: a whole number from 1 to {@link LockRequest#MAX_LIMIT}. */
    static final class LimitConverter implements CommandLine.ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return wholeNumber(value, 1, LockRequest.MAX_LIMIT, "a limit", " (how many may hold NAME at once)");
        }
    }

    /**
     * {@code value} as a whole number from {@code min} to {@code max}, else a conversion error
     * (picocli's usage error, exit 64) that names {@code what} and the range.
     */
    static int wholeNumber(String value, int min, int max, String what, String hint) {
        long n;
        try {
            n = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException(
                    "'" + value + "' is not a number; " + what + " is " + min + "-" + max);
        }
        if (n < min || n > max) {
            throw new CommandLine.TypeConversionException(
                    value.trim() + " is not " + what + "; use " + min + "-" + max + hint);
        }
        return (int) n;
    }

    /** 0..255, as an exit status must be. */
    static final class ExitCodeConverter implements CommandLine.ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            return wholeNumber(value, 0, 255, "an exit status", "");
        }
    }
}
