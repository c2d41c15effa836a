package dev.interlock.cli;

import dev.interlock.spi.support.Durations;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.regex.Pattern;

/**
 * The directory a verify run on several hosts shares: {@code SHARED/RUN-ID/} on storage every host
 * sees (for {@code dir:}, by default inside the lock directory itself).
 * <pre>
 * plan                  written by the lead: the lock name, the duration, the number of hosts
 * counter               the counter every host's workers increment under the lock
 * slots/                with --limit N: the permit slots every host's holders claim ({@link PermitSlots})
 * hosts/HOST-XXXX/      one per host: its workers' logs, ready (its workers are up),
 *                       host (its run is over: see {@link VerifyReport}), merged (it has read all)
 * </pre>
 * Hosts meet through these files only, never through their clocks: each host starts when it sees
 * every host ready, runs for the duration on its own clock, and merges once it sees every host's
 * {@code host} file. Files appear atomically (written under a temporary name, then renamed).
 *
 * <p><b>NFS caches:</b> a client keeps a directory's attributes and a "no such name" answer for
 * up to {@code acdirmax} (60 s by default), so a host that looked for the plan or a marker before
 * it existed could go on being told it is missing (measured: 28 s through another NFSv4.2 mount).
 * So a host never asks for a name it has not seen: it finds every file by listing its directory,
 * each directory from the top of the run down, opened anew each time (opening a directory makes
 * an NFS client revalidate it: close-to-open), and only then reads the file. Listings are retried
 * with a pause that doubles from {@value #FIRST_PAUSE_MS} ms to {@value #LONGEST_PAUSE_MS} ms
 * until the wait's deadline ({@code --join-timeout}).
 *
 * <p><b>Removal:</b> only the lead removes the run, and only once every host has said (its
 * {@code merged} marker) that it read everything; it waits for that up to {@code --join-timeout}
 * and otherwise leaves the run in place and says so. A host that finds the run removed under it
 * says so and exits with {@link ExitCodes#UNAVAILABLE}, never with an internal error.
 */
final class VerifyRunDir {
    static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}");
    private static final String PLAN = "plan";
    private static final String HOSTS = "hosts";
    static final long FIRST_PAUSE_MS = 50;
    static final long LONGEST_PAUSE_MS = 800;

    /** What the lead decided for every host: {@code limit} above 0 for a semaphore run ({@code --limit}). */
    record Plan(String name, long durationNanos, int hosts, int limit) {}

    /** The directory of the permit slots of a run whose counter is {@code counter}. */
    static Path slotsBeside(Path counter) {
        return counter.resolveSibling("slots");
    }

    /**
     * How this host sees the shared directory: the real file system, or in tests one that caches
     * the way an NFS client does.
     */
    interface View {
        /**
         * The names in {@code dir}, from the directory opened now.
         *
         * @throws NoSuchFileException if there is no {@code dir}
         * @throws NotDirectoryException if {@code dir} is not a directory
         */
        List<String> list(Path dir) throws IOException;

        /** The lines of {@code file}, opened now. */
        List<String> readLines(Path file) throws IOException;

        View FILE_SYSTEM = new View() {
            @Override
            public List<String> list(Path dir) throws IOException {
                List<String> names = new ArrayList<>();
                try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                    for (Path p : ds) {
                        names.add(p.getFileName().toString());
                    }
                }
                return names;
            }

            @Override
            public List<String> readLines(Path file) throws IOException {
                return Files.readAllLines(file, StandardCharsets.UTF_8);
            }
        };
    }

    /** The monotonic clock and the pause between two looks, injected so that tests wait without sleeping. */
    interface Pace {
        long nanoTime();

        void pause(long nanos) throws InterruptedException;

        Pace SYSTEM = new Pace() {
            @Override
            public long nanoTime() {
                return System.nanoTime();
            }

            @Override
            public void pause(long nanos) throws InterruptedException {
                TimeUnit.NANOSECONDS.sleep(nanos);
            }
        };
    }

    final Path run;
    final String runId;
    private final Plan plan;
    private final View view;
    private final Pace pace;

    private VerifyRunDir(Path run, String runId, Plan plan, View view, Pace pace) {
        this.run = run;
        this.runId = runId;
        this.plan = plan;
        this.view = view;
        this.pace = pace;
    }

    /** Creates the run's directory, its counter and its plan; the run id must be new in {@code shared}. */
    static VerifyRunDir lead(Path shared, String runId, Plan plan) {
        return lead(shared, runId, plan, View.FILE_SYSTEM, Pace.SYSTEM);
    }

    static VerifyRunDir lead(Path shared, String runId, Plan plan, View view, Pace pace) {
        Path run = shared.resolve(runId);
        try {
            // The shared directory may be made (inside an existing directory), never its parents: a
            // missing parent is a mistyped path or an unmounted file system that no other host sees.
            if (shared.getParent() != null && !Files.isDirectory(shared.getParent())) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "cannot create the run directory " + run + ": " + shared.getParent()
                                + " does not exist; give an existing shared directory with --shared-dir (is the shared file system mounted?)");
            }
            VerifyFiles.createLikeParent(shared, false);
            VerifyFiles.createLikeParent(run, true);
            VerifyFiles.createLikeParent(run.resolve(HOSTS), true);
            Path counter = Files.writeString(run.resolve("counter"), "0");
            if (plan.limit() > 0) {
                VerifyFiles.createLikeParent(slotsBeside(counter), true);
            }
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(run);
            perms.removeAll(Set.of(
                    PosixFilePermission.OWNER_EXECUTE,
                    PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_EXECUTE));
            Files.setPosixFilePermissions(counter, perms); // every host's workers write it
            String text = "interlock-verify-plan 1\nname " + URLEncoder.encode(plan.name(), StandardCharsets.UTF_8)
                    + "\nduration " + plan.durationNanos() + "\nhosts " + plan.hosts() + "\n"
                    + (plan.limit() > 0 ? "limit " + plan.limit() + "\n" : "");
            atomicWrite(run.resolve(PLAN), text);
        } catch (FileAlreadyExistsException e) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "run " + runId + " already exists in " + shared + ": choose another RUN-ID" + " (or remove " + run
                            + " if it is left from an interrupted run)");
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot create the run directory " + run + ": " + VerifyWorker.reason(e)
                            + "; choose a writable shared directory with --shared-dir",
                    e);
        }
        return new VerifyRunDir(run, runId, plan, view, pace);
    }

    /** Waits for the lead's plan of run {@code runId} in {@code shared}. */
    static VerifyRunDir join(Path shared, String runId, Duration timeout) throws InterruptedException {
        return join(shared, runId, timeout, View.FILE_SYSTEM, Pace.SYSTEM);
    }

    static VerifyRunDir join(Path shared, String runId, Duration timeout, View view, Pace pace)
            throws InterruptedException {
        Path run = shared.resolve(runId);
        Path planFile = run.resolve(PLAN);
        // From the parent of the shared directory down: the lead may create the shared directory too.
        Path top = shared.getParent() != null ? shared.getParent() : shared;
        Backoff backoff = new Backoff(pace, pace.nanoTime() + timeout.toNanos());
        while (true) {
            List<String> lines = null;
            try {
                if (listed(view, top, planFile)) {
                    lines = view.readLines(planFile);
                }
            } catch (NoSuchFileException e) {
                // listed, then gone or not yet readable: look again
            } catch (IOException e) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "cannot read the plan of run " + runId + " in " + run + ": " + VerifyWorker.reason(e),
                        e);
            }
            if (lines != null) {
                return new VerifyRunDir(run, runId, parsePlan(planFile, lines), view, pace);
            }
            if (!backoff.pause(false)) {
                throw new CliException(
                        VerifyReport.INCOMPLETE,
                        "no run " + runId + " in " + shared + " after "
                                + Durations.format(timeout) + ": start 'interlock verify --lead " + runId
                                + " --hosts K' on one host, with the"
                                + " same backend and --shared-dir, or check that this host sees the same directory");
            }
        }
    }

    private static Plan parsePlan(Path planFile, List<String> lines) {
        String name = null;
        long duration = -1;
        int hosts = -1;
        int limit = 0;
        try {
            for (String l : lines) {
                String[] f = l.split(" ");
                if (f[0].equals("name")) {
                    name = URLDecoder.decode(f[1], StandardCharsets.UTF_8);
                } else if (f[0].equals("duration")) {
                    duration = Long.parseLong(f[1]);
                } else if (f[0].equals("hosts")) {
                    hosts = Integer.parseInt(f[1]);
                } else if (f[0].equals("limit")) {
                    limit = Integer.parseInt(f[1]);
                }
            }
        } catch (RuntimeException e) {
            name = null;
        }
        if (!lines.isEmpty()
                && lines.get(0).equals("interlock-verify-plan 1")
                && name != null
                && duration > 0
                && hosts > 0) {
            return new Plan(name, duration, hosts, limit);
        }
        throw new CliException(
                ExitCodes.USAGE,
                planFile + " is not a plan of this version of interlock verify;"
                        + " run the same version on every host");
    }

    Plan plan() {
        return plan;
    }

    Path counter() {
        return run.resolve("counter");
    }

    /** The deadline {@code d} from now, on this run's clock. */
    long deadlineIn(Duration d) {
        return pace.nanoTime() + d.toNanos();
    }

    /** A new directory for this host's records. */
    Path newHostDir(String host) {
        String key = host.replaceAll("[^A-Za-z0-9._-]", "_") + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 32);
        try {
            return Files.createDirectory(run.resolve(HOSTS).resolve(key));
        } catch (NoSuchFileException e) {
            throw gone("create this host's directory");
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot create this host's directory in " + run.resolve(HOSTS) + ": " + VerifyWorker.reason(e),
                    e);
        }
    }

    /** Leaves {@code marker} in this host's directory, for the other hosts to see. */
    void mark(Path hostDir, String marker) {
        try {
            atomicWrite(hostDir.resolve(marker), "");
        } catch (NoSuchFileException e) {
            throw gone("say '" + marker + "'");
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot write " + hostDir.resolve(marker) + ": " + VerifyWorker.reason(e)
                            + "; the other hosts of run " + runId + " wait for it",
                    e);
        }
    }

    /**
     * Waits until {@link Plan#hosts()} hosts have {@code marker}, or the deadline; tells {@code seen}
     * how many it sees. Returns the hosts seen with it.
     */
    List<Path> await(String marker, long deadlineNanos, IntConsumer seen) throws InterruptedException {
        Backoff backoff = new Backoff(pace, deadlineNanos);
        int before = -1;
        while (true) {
            Map<Path, List<String>> hosts = look(backoff);
            List<Path> with = new ArrayList<>();
            if (hosts != null) {
                hosts.forEach((dir, markers) -> {
                    if (markers.contains(marker)) {
                        with.add(dir);
                    }
                });
                seen.accept(with.size());
                if (with.size() >= plan.hosts()) {
                    return with;
                }
            }
            if (!backoff.pause(with.size() > before)) {
                return with;
            }
            before = with.size();
        }
    }

    /**
     * The lead's last step: removes the run once every host that took part has left its
     * {@code merged} marker (it has read every record), waiting for that until the deadline.
     * Returns the host directories that did not confirm in time, in which case the run is left
     * in place: those hosts may still be reading it.
     */
    List<Path> removeOnceEveryHostRead(long deadlineNanos) throws InterruptedException {
        Backoff backoff = new Backoff(pace, deadlineNanos);
        while (true) {
            Map<Path, List<String>> hosts;
            try {
                hosts = look(backoff);
            } catch (CliException e) {
                // Removed meanwhile (nothing left to remove), or it cannot be listed: then it is left.
                return Files.exists(run) ? List.of(run.resolve(HOSTS)) : List.of();
            }
            List<Path> unread = new ArrayList<>();
            if (hosts != null) {
                hosts.forEach((dir, markers) -> {
                    if (!markers.contains("merged")) {
                        unread.add(dir);
                    }
                });
                if (unread.isEmpty() && hosts.size() >= plan.hosts()) {
                    VerifyFiles.deleteTree(run);
                    return List.of();
                }
            }
            if (!backoff.pause(false)) {
                return hosts == null ? List.of(run.resolve(HOSTS)) : unread;
            }
        }
    }

    /**
     * Each host's directory with the names in it, listed now; null (with the error kept in
     * {@code backoff}) when the listing failed in a way worth another look.
     *
     * @throws CliException if the run was removed, or the listing kept failing until the deadline
     */
    private Map<Path, List<String>> look(Backoff backoff) {
        Path hostsDir = run.resolve(HOSTS);
        try {
            Map<Path, List<String>> out = new TreeMap<>();
            for (String name : view.list(hostsDir)) {
                Path dir = hostsDir.resolve(name);
                try {
                    out.put(dir, view.list(dir));
                } catch (NoSuchFileException | NotDirectoryException e) {
                    // a name that is not a host's directory (or not yet one)
                }
            }
            return out;
        } catch (IOException e) {
            if (e instanceof NoSuchFileException && !stillThere()) {
                throw gone("read the other hosts' records");
            }
            if (backoff.expired()) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "cannot list " + hostsDir + ": " + VerifyWorker.reason(e) + "; every host of run " + runId
                                + " must be able to read the shared directory",
                        e);
            }
            return null;
        }
    }

    /** Whether the run directory is still listed in the shared directory (a listing, not a lookup: see the class comment). */
    private boolean stillThere() {
        try {
            return listed(view, run.getParent(), run.resolve(HOSTS));
        } catch (IOException e) {
            return true; // cannot tell: look again
        }
    }

    CliException gone(String doing) {
        return new CliException(
                ExitCodes.UNAVAILABLE,
                "cannot " + doing + ": the run directory " + run + " was removed (by the"
                        + " lead, which waits up to --join-timeout for every host to read it, or by hand); this host's result is unknown:"
                        + " run again with a new RUN-ID");
    }

    /**
     * Whether {@code file} is listed in its directory, every directory from {@code top} down being
     * listed first: opened anew, which makes an NFS client revalidate it, where a lookup of the
     * name could be answered from a cached "no such file".
     */
    static boolean listed(View view, Path top, Path file) throws IOException {
        Path dir = top;
        for (Path name : top.relativize(file)) {
            try {
                if (!view.list(dir).contains(name.toString())) {
                    return false;
                }
            } catch (NoSuchFileException | NotDirectoryException e) {
                return false;
            }
            dir = dir.resolve(name);
        }
        return true;
    }

    private static void atomicWrite(Path target, String text) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Pauses between looks: from {@value #FIRST_PAUSE_MS} ms, doubling to {@value #LONGEST_PAUSE_MS} ms, never past the deadline. */
    private static final class Backoff {
        private final Pace pace;
        private final long deadline;
        private long next = TimeUnit.MILLISECONDS.toNanos(FIRST_PAUSE_MS);

        Backoff(Pace pace, long deadline) {
            this.pace = pace;
            this.deadline = deadline;
        }

        boolean expired() {
            return pace.nanoTime() - deadline >= 0;
        }

        /** Pauses before the next look (starting over from the first pause after {@code progress}); false if the deadline has passed. */
        boolean pause(boolean progress) throws InterruptedException {
            long left = deadline - pace.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (progress) {
                next = TimeUnit.MILLISECONDS.toNanos(FIRST_PAUSE_MS);
            }
            pace.pause(Math.min(next, left));
            next = Math.min(next * 2, TimeUnit.MILLISECONDS.toNanos(LONGEST_PAUSE_MS));
            return true;
        }
    }
}
