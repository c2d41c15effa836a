package dev.interlock.cli;

import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
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
 * hosts/HOST-XXXX/      one per host: its workers' logs, ready (its workers are up),
 *                       host (its run is over: see {@link VerifyReport}), merged (it has read all)
 * </pre>
 * Hosts meet through these files only, never through their clocks: each host starts when it sees
 * every host ready, runs for the duration on its own clock, and merges once it sees every host's
 * {@code host} file. Files appear atomically (written under a temporary name, then renamed). On
 * NFS a new file may take up to the attribute cache time ({@code acdirmin}..{@code acdirmax}) to
 * be seen by other hosts, so hosts may start seconds apart: that only shortens the time they
 * contend, and the waits are bounded by {@code --join-timeout}.
 */
final class VerifyRunDir {
    static final Pattern RUN_ID = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}");
    private static final String PLAN = "plan";
    private static final String HOSTS = "hosts";

    /** What the lead decided for every host. */
    record Plan(String name, long durationNanos, int hosts) {}

    final Path run;
    final String runId;
    private Plan plan;

    private VerifyRunDir(Path run, String runId, Plan plan) {
        this.run = run;
        this.runId = runId;
        this.plan = plan;
    }

    /** Creates the run's directory, its counter and its plan; the run id must be new in {@code shared}. */
    static VerifyRunDir lead(Path shared, String runId, Plan plan) {
        Path run = shared.resolve(runId);
        try {
            if (shared.getParent() != null && !Files.isDirectory(shared.getParent())) {
                Files.createDirectories(shared.getParent());
            }
            VerifyFiles.createLikeParent(shared, false);
            VerifyFiles.createLikeParent(run, true);
            VerifyFiles.createLikeParent(run.resolve(HOSTS), true);
            Path counter = Files.writeString(run.resolve("counter"), "0");
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(run);
            perms.removeAll(Set.of(PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_EXECUTE));
            Files.setPosixFilePermissions(counter, perms); // every host's workers write it
            String text = "interlock-verify-plan 1\nname " + URLEncoder.encode(plan.name(), StandardCharsets.UTF_8) + "\nduration "
                    + plan.durationNanos() + "\nhosts " + plan.hosts() + "\n";
            atomicWrite(run.resolve(PLAN), text);
        } catch (FileAlreadyExistsException e) {
            throw new CliException(ExitCodes.USAGE, "run " + runId + " already exists in " + shared + ": choose another RUN-ID"
                    + " (or remove " + run + " if it is left from an interrupted run)");
        } catch (IOException e) {
            throw new CliException(ExitCodes.UNAVAILABLE, "cannot create the run directory " + run + ": " + VerifyWorker.reason(e)
                    + "; choose a writable shared directory with --shared-dir", e);
        }
        return new VerifyRunDir(run, runId, plan);
    }

    /** Waits for the lead's plan of run {@code runId} in {@code shared}. */
    static VerifyRunDir join(Path shared, String runId, Duration timeout) throws InterruptedException {
        Path run = shared.resolve(runId);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                List<String> lines = Files.readAllLines(run.resolve(PLAN), StandardCharsets.UTF_8);
                String name = null;
                long duration = -1;
                int hosts = -1;
                for (String l : lines) {
                    String[] f = l.split(" ");
                    if (f[0].equals("name")) {
                        name = URLDecoder.decode(f[1], StandardCharsets.UTF_8);
                    } else if (f[0].equals("duration")) {
                        duration = Long.parseLong(f[1]);
                    } else if (f[0].equals("hosts")) {
                        hosts = Integer.parseInt(f[1]);
                    }
                }
                if (!lines.isEmpty() && lines.get(0).equals("interlock-verify-plan 1") && name != null && duration > 0 && hosts > 0) {
                    return new VerifyRunDir(run, runId, new Plan(name, duration, hosts));
                }
                throw new CliException(ExitCodes.USAGE, run.resolve(PLAN) + " is not a plan of this version of interlock verify;"
                        + " run the same version on every host");
            } catch (NoSuchFileException e) {
                // not yet
            } catch (IOException | RuntimeException e) {
                if (e instanceof CliException) {
                    throw (CliException) e;
                }
                throw new CliException(ExitCodes.UNAVAILABLE, "cannot read the plan of run " + runId + " in " + run + ": "
                        + (e instanceof IOException ? VerifyWorker.reason((IOException) e) : e.getMessage()), e);
            }
            if (System.nanoTime() >= deadline) {
                throw new CliException(VerifyReport.INCOMPLETE, "no run " + runId + " in " + shared + " after "
                        + Durations.format(timeout) + ": start 'interlock verify --lead " + runId + " --hosts K' on one host, with the"
                        + " same backend and --shared-dir, or check that this host sees the same directory");
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    Plan plan() {
        return plan;
    }

    Path counter() {
        return run.resolve("counter");
    }

    /** A new directory for this host's records. */
    Path newHostDir(String host) {
        String key = host.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 32);
        try {
            return Files.createDirectory(run.resolve(HOSTS).resolve(key));
        } catch (IOException e) {
            throw new CliException(ExitCodes.UNAVAILABLE, "cannot create this host's directory in " + run.resolve(HOSTS) + ": "
                    + VerifyWorker.reason(e), e);
        }
    }

    static void mark(Path hostDir, String marker) throws IOException {
        atomicWrite(hostDir.resolve(marker), "");
    }

    /** Hosts' directories holding {@code file}. */
    List<Path> hostsWith(String file) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(run.resolve(HOSTS))) {
            for (Path p : ds) {
                if (Files.isDirectory(p) && Files.exists(p.resolve(file))) {
                    out.add(p);
                }
            }
        }
        out.sort(null);
        return out;
    }

    /**
     * Waits until {@link Plan#hosts()} hosts have {@code file}, or the deadline; tells {@code seen}
     * how many it sees. Returns the hosts seen.
     */
    List<Path> await(String file, long deadlineNanos, IntConsumer seen) throws IOException, InterruptedException {
        while (true) {
            List<Path> hosts = hostsWith(file);
            seen.accept(hosts.size());
            if (hosts.size() >= plan.hosts() || System.nanoTime() >= deadlineNanos) {
                return hosts;
            }
            TimeUnit.MILLISECONDS.sleep(100);
        }
    }

    private static void atomicWrite(Path target, String text) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    }
}
