package dev.interlock.cli;

import dev.interlock.HolderInfo;
import dev.interlock.Lease;
import dev.interlock.LimitMismatchException;
import dev.interlock.LockBackendException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.Mode;
import dev.interlock.check.CheckWorker;
import dev.interlock.spi.support.Durations;
import dev.interlock.spi.support.ProcessIdentity;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code interlock verify}: hammers the user's own lock space from several worker processes and
 * proves, from what they recorded, whether it excluded (see {@link VerifyWorker} for a worker,
 * {@link VerifyReport} for the proof and the numbers, {@link VerifyRunDir} for runs on several
 * hosts, {@link FileSystemProbe} for what it says about {@code flock:} and {@code dir:} file
 * systems).
 */
@Command(
        mixinStandardHelpOptions = true,
        name = "verify",
        header = "Check that a lock space really excludes: hammer it from several processes.",
        description = {
            "",
            "Worker processes take the lock for a duration (exclusive, or shared with",
            "probability R), read a counter file under it and, when exclusive, write",
            "it back plus one. From their records alone verify proves that no",
            "increment was lost and that fencing tokens follow the counter (no clock",
            "is compared across hosts), and on one host that no exclusive section",
            "overlapped another. It prints acquisitions, violations (with the holders,",
            "tokens and values involved), hand-off latency, throughput and the longest",
            "wait; with --crash-test, how soon a holder killed with SIGKILL is",
            "replaced. For flock: and dir: it names the file system and warns about",
            "mount options that break locking (NFS nolock, local_lock, lookupcache).",
            "",
            "With --limit N the workers take permits of a semaphore of N instead:",
            "each holder claims a free slot among N (an atomic create) and gives it",
            "back before it releases, so a holder that finds all N taken proves that",
            "more than N were inside at once; tokens must be unique and in order, and",
            "after the run the name must list none of the released permits.",
            "",
            "Several hosts: 'interlock verify --lead RUN-ID --hosts K' on one host,",
            "'interlock verify --join RUN-ID' on the others, on one lock space; their",
            "records meet in a shared directory (dir:/flock: use the lock directory;",
            "other backends need --shared-dir)."
        },
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {
            "  interlock verify --backend dir:/mnt/shared/locks",
            "  interlock verify --backend flock:/var/lock/app -p 8 -d 30s --crash-test",
            "  interlock verify --backend redis://redis.internal --limit 3 --crash-test",
            "  interlock verify --backend dir:/mnt/nfs/locks --lead n1 --hosts 3  # host a",
            "  interlock verify --backend dir:/mnt/nfs/locks --join n1            # b, c"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:mutual exclusion held (--limit N: at most N held at once)",
            " 1:incomplete: a worker failed or hung, a host did not join, nothing was acquired",
            " 2:mutual exclusion (or the limit) VIOLATED (the evidence is printed)",
            "64:usage error",
            "69:the backend, or a run's shared directory, is unusable or unreachable (the reason is printed)"
        })
final class VerifyCommand implements Callable<Integer> {
    /** The name of the default shared directory inside a {@code dir:} or {@code flock:} lock directory (ignored by both). */
    static final String SHARED_IN_LOCK_DIR = ".interlock-verify";

    private static final int KILLS = 3;

    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    BackendOption backend;

    @Option(
            names = {"-p", "--processes"},
            paramLabel = "N",
            description = "Worker processes on this host (default: 4; with --limit N, N+2 if more).")
    Integer processesOption;

    /** The worker processes on this host, once validated. */
    int processes;

    @Option(
            names = "--limit",
            paramLabel = "N",
            converter = RunCommand.LimitConverter.class,
            description = "Check a semaphore of N permits instead of the lock (as 'run --limit N' takes them).")
    Integer limit;

    @Option(
            names = {"-d", "--duration"},
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "How long the workers run (default: 10s).")
    Duration duration;

    @Option(
            names = "--shared-ratio",
            paramLabel = "R",
            description =
                    "Share of acquisitions that are shared (readers), 0 to 0.99 (default: 0.25; not with --limit).")
    Double sharedRatioOption;

    /** The share of shared acquisitions, once validated: 0 with --limit (a permit has one holder). */
    double sharedRatio;

    /** The semaphore's limit: --limit, or the lead's for a host that joins; 0 to verify the lock. */
    int permitLimit;

    @Option(
            names = "--crash-test",
            description = "Kill a holder with SIGKILL inside its section " + KILLS
                    + " times, and measure how long until the next grant.")
    boolean crashTest;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Lease of lease-based backends (default: the backend's, 30s).")
    Duration lease;

    @Option(
            names = "--name",
            paramLabel = "NAME",
            description = "Lock name to hammer (default: interlock-verify-<random>, which no one else uses).")
    String name;

    @Option(names = "--json", description = "Print one JSON object instead of the screen.")
    boolean json;

    @Option(
            names = "--keep",
            paramLabel = "DIR",
            description = "Keep the counter and every worker's records in DIR (new or empty), e.g. for a bug report.")
    String keepOption;

    @Option(names = "--lead", paramLabel = "RUN-ID", description = "Lead a run on several hosts (with --hosts).")
    String lead;

    @Option(
            names = "--hosts",
            paramLabel = "K",
            description = "With --lead: how many hosts take part, this one included.")
    Integer hosts;

    @Option(
            names = "--join",
            paramLabel = "RUN-ID",
            description = "Take part in the run RUN-ID that another host leads.")
    String join;

    @Option(
            names = "--shared-dir",
            paramLabel = "DIR",
            description = "With --lead/--join: a directory every host sees, for the counter and the records"
                    + " (default for dir: and flock:: LOCKDIR/" + SHARED_IN_LOCK_DIR + ").")
    String sharedDirOption;

    @Option(
            names = "--join-timeout",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "With --lead/--join: how long to wait for the other hosts (default: 2m).")
    Duration joinTimeout;

    @Mixin
    Verbosity verbosity;

    private VerifyProgress progress;
    /** The workers while they run, for the shutdown hook. */
    private volatile VerifyWorkers liveWorkers;
    /** --keep and --shared-dir as paths (picocli's own Path converter is left out to save start-up time). */
    Path keep;

    Path sharedDir;

    /** What is verified: the resolved URI, its scheme, and the lock directory of file-backed schemes. */
    private record Target(String uri, String scheme, Optional<Path> lockDir) {}

    /**
     * What this host runs: the lock name (made up unless given, then removed after the run), for
     * how long, how it is shown, and for a run of several hosts the shared run directory.
     */
    private record Plan(
            String lockName,
            boolean generated,
            Duration runFor,
            Duration waitHosts,
            String shown,
            VerifyRunDir runDir) {}

    /** The file systems under the lock directory and the shared run directory, as report lines and warnings. */
    private record Probes(FileSystemProbe.Report lockDir, List<String> lines, List<String> warnings) {}

    /** Where this host's workers write their records and the counter; a temporary one is removed after the run. */
    private record Workspace(Path work, Path counter, boolean temporary) {}

    @Override
    public Integer call() throws Exception {
        VerifyOptionChecks.settle(this);
        progress = new VerifyProgress(spec.commandLine().getErr(), FileSystemProbe.stderrIsTerminal());
        Target target = target();
        Plan plan = plan(target);
        Probes probes = probeFileSystems(target, plan.runDir());
        Workspace ws = workspace(plan.runDir());
        Thread cleanup = cleanupOnExit(ws);
        Runtime.getRuntime().addShutdownHook(cleanup);
        try {
            if (plan.runDir() == null) {
                Files.writeString(ws.counter(), "0");
                if (permitLimit > 0) {
                    Files.createDirectory(VerifyRunDir.slotsBeside(ws.counter()));
                }
            }
            VerifyReport report = run(
                    target.uri(),
                    plan.shown(),
                    plan.lockName(),
                    plan.runFor(),
                    ws.work(),
                    ws.counter(),
                    plan.runDir(),
                    plan.waitHosts(),
                    probes.warnings());
            Path kept = keepRecords(plan.runDir(), ws);
            print(report, probes, kept);
            if (plan.runDir() != null) {
                multiHost()
                        .finish(
                                plan.runDir(),
                                ws.work(),
                                plan.generated(),
                                target.uri(),
                                plan.lockName(),
                                plan.waitHosts());
            } else if (plan.generated() && target.lockDir().isPresent()) {
                VerifyFiles.removeLockFiles(target.scheme(), target.lockDir().get(), plan.lockName());
            }
            return report.exitCode();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException e) {
                // shutting down: the hook does it
            }
            progress.clear();
            if (ws.temporary()) {
                VerifyFiles.deleteTree(ws.work());
            }
        }
    }

    private VerifyMultiHost multiHost() {
        return new VerifyMultiHost(
                lead != null, sharedDir != null, progress, spec.commandLine().getErr());
    }

    private Target target() {
        String uri = DefaultBackend.resolve(backend.uri, top.env, true);
        String scheme = uri.contains(":") ? uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT) : "";
        return new Target(uri, scheme, FileSystemProbe.directoryOf(uri));
    }

    /** The run this host takes part in: its own, one it leads (the plan written for the others), or one it joins (the plan read). */
    private Plan plan(Target target) throws InterruptedException {
        Duration runFor = duration != null ? duration : Duration.ofSeconds(10);
        Duration waitHosts = joinTimeout != null ? joinTimeout : Duration.ofMinutes(2);
        boolean generated = name == null;
        String lockName = generated
                ? "interlock-verify-"
                        + Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE)
                : name;
        Path shared = lead != null || join != null ? sharedDirectory(target) : null;
        VerifyRunDir runDir = null;
        if (join != null) {
            progress.show("waiting for the plan of run " + join + " in " + shared);
            runDir = VerifyRunDir.join(shared, join, waitHosts);
            lockName = runDir.plan().name();
            runFor = Duration.ofNanos(runDir.plan().durationNanos());
            permitLimit = runDir.plan().limit();
            generated = false; // the lead cleans up
        }
        String shown = preflight(lockName);
        if (lead != null) {
            runDir = VerifyRunDir.lead(
                    shared, lead, new VerifyRunDir.Plan(lockName, runFor.toNanos(), hosts, permitLimit));
        }
        return new Plan(lockName, generated, runFor, waitHosts, shown, runDir);
    }

    /** The directory every host of a run sees: --shared-dir, or one in the lock directory of dir: and flock:. */
    private Path sharedDirectory(Target target) {
        Path shared = sharedDir != null
                ? sharedDir.toAbsolutePath().normalize()
                : target.lockDir()
                        .map(d -> d.resolve(SHARED_IN_LOCK_DIR))
                        .orElseThrow(() -> new CliException(
                                ExitCodes.USAGE,
                                "--" + (lead != null ? "lead" : "join") + " on " + target.scheme()
                                        + ": needs --shared-dir DIR, a directory every"
                                        + " host sees (only dir: and flock: keep the run in the lock directory)"));
        if (sharedDir != null && !Files.isDirectory(shared)) {
            // Never made with its parents: a mistyped path used to become a new directory that no
            // other host sees, and the lead then waited for hosts that could never join.
            throw usage("--shared-dir " + shared
                    + " is not a directory: give one that every host of the run sees (create it"
                    + " first), or correct the path");
        }
        return shared;
    }

    private Probes probeFileSystems(Target target, VerifyRunDir runDir) {
        FileSystemProbe.Report fs = null;
        List<String> lines = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        if (target.lockDir().isPresent()) {
            Path lockDir = target.lockDir().get();
            fs = FileSystemProbe.probe(target.scheme(), lockDir, lease != null ? lease : Duration.ofSeconds(30));
            lines.add(fs.describe());
            warnings.addAll(fs.warnings());
            if (runDir != null && !runDir.run.startsWith(lockDir)) {
                FileSystemProbe.Report sf = FileSystemProbe.probe("shared", runDir.run, Duration.ofSeconds(30));
                lines.add("shared directory " + runDir.run + ": " + sf.describe());
                warnings.addAll(sf.warnings());
            }
        }
        if (target.scheme().equals("mem")) {
            warnings.add("mem: locks live inside one process: separate worker processes never exclude each other");
        }
        return new Probes(fs, lines, warnings);
    }

    private Workspace workspace(VerifyRunDir runDir) {
        if (runDir != null) {
            return new Workspace(runDir.newHostDir(ProcessIdentity.current().host()), runDir.counter(), false);
        }
        Path work = keep != null ? VerifyFiles.createKeep(keep) : VerifyFiles.createTemporary();
        return new Workspace(work, work.resolve("counter"), keep == null);
    }

    /** On Ctrl-C or SIGTERM: stops the workers before their directory goes. */
    private Thread cleanupOnExit(Workspace ws) {
        return new Thread(
                () -> {
                    VerifyWorkers w = liveWorkers;
                    if (w != null) {
                        w.close();
                    }
                    if (ws.temporary()) {
                        VerifyFiles.deleteTree(ws.work());
                    }
                    progress.clear();
                },
                "verify-cleanup");
    }

    /** Where the records stay after the run (--keep), copying a shared run's directory there; null if nowhere. */
    private Path keepRecords(VerifyRunDir runDir, Workspace ws) {
        if (keep == null) {
            return null;
        }
        if (runDir == null) {
            return ws.work();
        }
        try {
            VerifyFiles.copyTree(runDir.run, VerifyFiles.createKeep(keep));
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot copy the run directory " + runDir.run + " to --keep " + keep + ": "
                            + VerifyWorker.reason(e),
                    e);
        }
        return keep.toAbsolutePath();
    }

    private void print(VerifyReport report, Probes probes, Path kept) {
        progress.clear();
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(report.json(probes.lockDir(), kept));
        } else {
            out.print(report.text(probes.lines(), kept));
        }
        out.flush();
    }

    private VerifyReport run(
            String uri,
            String shown,
            String lockName,
            Duration runFor,
            Path work,
            Path counter,
            VerifyRunDir runDir,
            Duration waitHosts,
            List<String> warnings)
            throws IOException, InterruptedException {
        String host = ProcessIdentity.current().host();
        List<String> problems = new ArrayList<>();
        VerifyWorkers.Setup setup = new VerifyWorkers.Setup(
                uri,
                lockName,
                sharedRatio,
                lease != null ? lease.toMillis() : 0,
                work,
                permitLimit > 0 ? VerifyRunDir.slotsBeside(counter) : counter,
                runDir != null ? work.getFileName().toString() : host,
                permitLimit);
        VerifyWorkers.Outcome outcome;
        List<Path> hostDirs;
        int kills;
        try (VerifyWorkers workers = new VerifyWorkers(setup)) {
            liveWorkers = workers;
            progress.show("starting " + processes + " worker processes");
            workers.start(processes);
            if (runDir != null) {
                runDir.mark(work, "ready");
                int expected = runDir.plan().hosts();
                List<Path> ready = runDir.await(
                        "ready",
                        runDir.deadlineIn(waitHosts),
                        n -> progress.show("waiting for hosts: " + n + " of " + expected + " ready"));
                if (ready.size() < expected) {
                    workers.close(); // they write in the run directory
                    throw new CliException(
                            VerifyReport.INCOMPLETE,
                            "only " + ready.size() + " of " + expected + " hosts of run "
                                    + runDir.runId + " were ready after " + Durations.format(waitHosts)
                                    + multiHost().abandon(runDir) + "; start the"
                                    + " others with 'interlock verify --join " + runDir.runId
                                    + "' on the same lock space and shared directory");
                }
            }
            kills = crashTest ? KILLS : 0;
            long total = runFor.toNanos();
            outcome = workers.run(
                    runFor,
                    kills,
                    (elapsed, sections, killed) -> progress.show(String.format(
                            Locale.ROOT,
                            "verify: %.1fs of %s, %d acquisitions%s",
                            elapsed / 1e9,
                            Durations.format(Duration.ofNanos(total)),
                            sections,
                            killed > 0 ? ", " + killed + " killed" : "")));
        }
        if (kills > 0 && outcome.killed().size() < kills) {
            warnings.add("crash test: " + outcome.killed().size() + " of the " + kills
                    + " kills asked for were made here: after the"
                    + " last request no worker on this host entered an exclusive section before the end (a longer --duration gives"
                    + " them time)");
        }
        try {
            VerifyHostLog.write(work, setup.host(), CheckWorker.clockId(), processes, outcome);
        } catch (NoSuchFileException e) {
            if (runDir != null) {
                throw runDir.gone("leave this host's records");
            }
            throw e;
        }
        if (runDir != null) {
            int expected = runDir.plan().hosts();
            hostDirs = runDir.await(
                    "host",
                    runDir.deadlineIn(waitHosts.plus(runFor)),
                    n -> progress.show("waiting for hosts to finish: " + n + " of " + expected));
            if (hostDirs.size() < expected) {
                problems.add("only " + hostDirs.size() + " of " + expected
                        + " hosts finished; the others' sections are missing," + " so the counter cannot add up");
            }
        } else {
            hostDirs = List.of(work);
        }
        liveWorkers = null;
        List<HolderInfo> heldAfter = permitLimit > 0 ? holdersAfter(lockName, problems) : List.of();
        VerifyReport.Setup s = new VerifyReport.Setup(
                shown,
                lockName,
                processes,
                runFor.toNanos(),
                sharedRatio,
                crashTest,
                runDir != null ? runDir.runId : null,
                runDir != null ? runDir.plan().hosts() : 1,
                permitLimit);
        return VerifyReport.fromRecords(s, hostDirs, counter, problems, warnings, heldAfter);
    }

    /** Who holds the semaphore after the run, for the check that every permit came back; empty (and a problem) if unknown. */
    private List<HolderInfo> holdersAfter(String lockName, List<String> problems) {
        try (LockSpace space = backend.open(top.env)) {
            return space.status(lockName).holders();
        } catch (LockBackendException e) {
            problems.add("the holders of '" + lockName + "' after the run could not be read, so whether every permit"
                    + " came back is unknown: " + e.getMessage());
            return List.of();
        }
    }

    /**
     * Opens the space and takes the lock (or a permit) once, so that an unusable backend, or one
     * without semaphores, is exit 69 before any worker starts, and a --limit other than the one of
     * the name's holders exit 64.
     */
    private String preflight(String lockName) {
        try (LockSpace space = backend.open(top.env)) {
            LockRequest request = space.lock(lockName).mode(Mode.EXCLUSIVE);
            if (permitLimit > 0) {
                BackendOption.requireSemaphores(space);
                request.limit(permitLimit);
            }
            try (Lease l = request.acquire(Duration.ofSeconds(10))) {
                l.token();
            } catch (LimitMismatchException e) {
                throw new CliException(ExitCodes.USAGE, e.getMessage(), e);
            } catch (LockTimeoutException e) {
                // held by someone else (a --name in use, another host of the run): the workers will wait their turn
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliException(ExitCodes.SOFTWARE, "interrupted");
            } catch (LockBackendException e) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "cannot lock '" + lockName + "' on " + space.uri() + ": " + e.getMessage(),
                        e);
            }
            return space.uri();
        }
    }

    CliException usage(String message) {
        return new CliException(ExitCodes.USAGE, message);
    }
}
