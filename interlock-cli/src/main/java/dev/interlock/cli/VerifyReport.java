package dev.interlock.cli;

import dev.interlock.HolderInfo;
import dev.interlock.check.ExclusionCheck;
import dev.interlock.check.Handoffs;
import dev.interlock.check.Section;
import dev.interlock.spi.support.Durations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of a verify run: from what each host's workers recorded ({@link VerifyHostLog}),
 * proves exclusion with {@link ExclusionCheck} (the counter rules across hosts, the interval rules
 * among sections of one clock) and measures hand-offs, waits, throughput and crash recoveries.
 * {@link VerifyReportText} and {@link VerifyReportJson} print it.
 */
final class VerifyReport {
    static final int HELD = ExitCodes.OK;
    /** Some rule was broken: the lock space does not exclude. */
    static final int VIOLATED = 2;
    /** The run could not finish (a worker failed or hung, a host did not join, nothing was acquired). */
    static final int INCOMPLETE = 1;

    /** What the run was: for the heading and the JSON; {@code limit} above 0 for a semaphore of that many ({@code --limit}). */
    record Setup(
            String backend,
            String name,
            int processes,
            long durationNanos,
            double sharedRatio,
            boolean crashTest,
            String runId,
            int hostsExpected,
            int limit) {}

    // ---- analysis -----------------------------------------------------------------------------

    final Setup setup;
    final List<VerifyHostLog.HostLog> hosts;
    final int acquisitions;
    final int exclusive;
    final int shared;
    final long throughput;
    final List<String> violations;
    final boolean violationsTruncated;
    final long counterStart;
    final long counterEnd;
    final String counterText;
    final int killedExclusive;
    final long[] handoffs;
    final long longestWait;
    final String longestWaitBy;
    final boolean longestWaitUnfinished;
    /**
     * Per killed holder: from the kill to the next grant to a waiter on its host; {@link #NO_WAITER}
     * if the grants after it went to processes that had not been waiting, {@link #NO_GRANT} if
     * nobody on its host got the lock again before the end.
     */
    final List<Long> recoveries = new ArrayList<>();

    static final long NO_WAITER = -1;
    static final long NO_GRANT = -2;
    final List<String> killedBy = new ArrayList<>();
    final List<String> problems = new ArrayList<>();
    final List<String> warnings = new ArrayList<>();
    int lostLeases;
    /** Some hosts' records are missing: the final counter is not compared. */
    final boolean partial;
    /** A permit run: the most holders seen at once on one host (-1 for a lock run). */
    final int mostAtOnce;
    /** A permit run: holders that found every slot taken, one of them a killed holder's (not proof of anything). */
    final int fullButKilled;
    /**
     * A permit run: the permits of this run still held after it (by the status of the name), as
     * text; the killed holders' are in {@link #killedStillHeld} (their lease has not run out yet).
     */
    final List<String> notReturned = new ArrayList<>();

    final List<String> killedStillHeld = new ArrayList<>();

    private VerifyReport(
            Setup setup,
            List<VerifyHostLog.HostLog> hosts,
            long start,
            String counterText,
            List<String> problems,
            List<String> warnings,
            List<HolderInfo> heldAfter) {
        this.setup = setup;
        this.hosts = List.copyOf(hosts);
        this.problems.addAll(problems);
        this.warnings.addAll(warnings);
        List<Section> all = new ArrayList<>();
        List<Section> killed = new ArrayList<>();
        List<String> torn = new ArrayList<>();
        List<PermitCheck.FullSlots> full = new ArrayList<>();
        long waitMax = -1;
        String waitBy = null;
        boolean waitUnfinished = false;
        double perSecond = 0;
        for (VerifyHostLog.HostLog h : hosts) {
            all.addAll(h.sections());
            killed.addAll(h.killed());
            torn.addAll(h.torn());
            full.addAll(h.full());
            lostLeases += h.lostLeases();
            for (Section s : h.sections()) {
                if (s.waitNanos() > waitMax) {
                    waitMax = s.waitNanos();
                    waitBy = s.source() + ", " + (setup.limit() > 0 ? "permit" : s.exclusive() ? "EX" : "SH");
                    waitUnfinished = false;
                }
            }
            for (VerifyHostLog.Wait w : h.unfinished()) {
                if (w.nanos() > waitMax) {
                    waitMax = w.nanos();
                    waitBy = w.source() + ", still waiting when stopped";
                    waitUnfinished = true;
                }
            }
            if (h.runNanos() > 0) {
                perSecond += h.sections().size() * 1e9 / h.runNanos();
            }
            for (VerifyWorkers.Failure f : h.failures()) {
                this.problems.add("worker " + f.worker()
                        + (f.stuck()
                                ? " did not stop within 15s after the end and was killed"
                                : " failed (exit status " + f.exitCode() + ")")
                        + (f.stderr().isEmpty() ? "" : ": " + f.stderr().replace("\n", " | ")));
            }
        }
        this.longestWait = waitMax;
        this.longestWaitBy = waitBy;
        this.longestWaitUnfinished = waitUnfinished;
        this.throughput = Math.round(perSecond);
        this.acquisitions = all.size() + killed.size();
        int ex = 0;
        for (Section s : all) {
            if (s.exclusive()) {
                ex++;
            }
        }
        int kex = 0;
        for (Section s : killed) {
            if (s.exclusive()) {
                kex++;
            }
        }
        this.exclusive = ex;
        this.shared = all.size() - ex;
        this.killedExclusive = kex;
        this.counterStart = start;
        this.counterText = counterText == null ? null : counterText.trim();
        long end;
        try {
            end = counterText == null ? -1 : Long.parseLong(counterText.trim());
        } catch (NumberFormatException e) {
            end = -1;
        }
        this.counterEnd = end;
        // With a host's records missing, its increments are in the counter but not in the records:
        // the final value proves nothing (the rules between the sections at hand still hold).
        this.partial = hosts.size() < setup.hostsExpected();
        List<String> v = new ArrayList<>();
        PermitCheck.Report permits = null;
        if (setup.limit() > 0) {
            permits = PermitCheck.check(setup.limit(), all, killed, full);
            v.addAll(permits.violations());
            v.addAll(permitsLeft(heldAfter, all, killed));
            this.violationsTruncated = permits.truncated();
        } else {
            ExclusionCheck.Report r = ExclusionCheck.check(all, killed, start, partial ? -1 : end);
            v.addAll(r.violations());
            this.violationsTruncated = r.violations().size() >= ExclusionCheck.maxViolations();
        }
        this.mostAtOnce = permits != null ? permits.mostAtOnce() : -1;
        this.fullButKilled = permits != null ? permits.fullButKilled() : 0;
        if (!torn.isEmpty()) {
            v.add("torn counter: " + torn.size()
                    + " section(s) read a counter that was not a number, so two writers wrote it at"
                    + " once; the first: " + torn.get(0));
        }
        if (counterText != null && end < 0) {
            v.add("the counter holds '" + VerifyReportText.shorten(this.counterText)
                    + "' after the run, not a number: two writers wrote it at once");
        }
        this.violations = v;
        List<Section> both = new ArrayList<>(all);
        both.addAll(killed);
        List<Long> lat = new ArrayList<>();
        Map<Section, Long> recovery = new HashMap<>();
        for (Handoffs.Handoff h : Handoffs.of(both)) {
            if (killed.contains(h.from())) {
                recovery.merge(h.from(), h.nanos(), Math::min);
            } else {
                lat.add(h.nanos());
            }
        }
        this.handoffs = lat.stream().mapToLong(Long::longValue).sorted().toArray();
        for (int i = 0; i < killed.size(); i++) {
            Section k = killed.get(i);
            Long next = permits != null ? permits.recoveries().get(i) : recovery.get(k);
            if (next == null) {
                boolean grantedAfter = false;
                for (Section s : all) {
                    grantedAfter |= s.clock().equals(k.clock()) && s.enter() > k.exit();
                }
                next = grantedAfter ? NO_WAITER : NO_GRANT;
            }
            recoveries.add(next);
            killedBy.add(k.source());
        }
        if (this.violations.isEmpty() && acquisitions == 0) {
            this.problems.add("no acquisition in " + Durations.format(Duration.ofNanos(setup.durationNanos()))
                    + ": the workers waited the whole time (is the lock held by someone else? see 'interlock status "
                    + setup.name() + "')");
        }
        if (lostLeases > 0) {
            this.warnings.add(
                    lostLeases + " lease(s) were lost during their section (renewal failed or the lock was broken)");
        }
    }

    /**
     * Reads the records of {@code hostDirs} and the counter, and analyses them; what cannot be read
     * is added to {@code problems}.
     */
    static VerifyReport fromRecords(
            Setup setup,
            List<Path> hostDirs,
            Path counter,
            List<String> problems,
            List<String> warnings,
            List<HolderInfo> heldAfter) {
        List<VerifyHostLog.HostLog> logs = new ArrayList<>();
        for (Path d : hostDirs) {
            try {
                logs.add(VerifyHostLog.read(d));
            } catch (IOException | RuntimeException e) {
                problems.add("the records in " + d + " could not be read: "
                        + (e instanceof IOException ? VerifyWorker.reason((IOException) e) : e.getMessage()));
            }
        }
        String counterText = null;
        try {
            if (setup.limit() == 0) {
                counterText = Files.readString(counter, StandardCharsets.US_ASCII);
            }
        } catch (IOException e) {
            problems.add("the counter " + counter + " could not be read: " + VerifyWorker.reason(e));
        }
        return analyze(setup, logs, 0, counterText, problems, warnings, heldAfter);
    }

    /**
     * Analyses the hosts' records.
     *
     * @param counterText the counter file's content after the run, or null if it could not be read
     * @param problems reasons the run is incomplete found before the analysis (missing hosts...)
     * @param heldAfter for a permit run, the holders of the name after every worker stopped (every
     *     permit of the run must have come back); ignored for a lock run
     */
    static VerifyReport analyze(
            Setup setup,
            List<VerifyHostLog.HostLog> hosts,
            long start,
            String counterText,
            List<String> problems,
            List<String> warnings,
            List<HolderInfo> heldAfter) {
        return new VerifyReport(setup, hosts, start, counterText, problems, warnings, heldAfter);
    }

    /**
     * The violations among the holders left after a permit run: a permit whose holder released it
     * (its section is recorded complete) and that the name still lists was never given back.
     * A killed holder's permit may still be held until its lease runs out: noted, not a violation.
     * Holders with other tokens are not this run's (someone else uses a --name given).
     */
    private List<String> permitsLeft(List<HolderInfo> heldAfter, List<Section> completed, List<Section> killed) {
        Map<Long, Section> released = new HashMap<>();
        completed.forEach(s -> released.put(s.token(), s));
        Map<Long, Section> dead = new HashMap<>();
        killed.forEach(s -> dead.put(s.token(), s));
        List<String> out = new ArrayList<>();
        for (HolderInfo h : heldAfter) {
            if (h.token().isEmpty()) {
                continue;
            }
            long t = h.token().getAsLong();
            if (released.containsKey(t)) {
                String leak = "permit not returned: " + PermitCheck.describe(released.get(t))
                        + " was released, yet after the run the name still lists it (" + h.describe() + ")";
                notReturned.add(leak);
                out.add(leak);
            } else if (dead.containsKey(t)) {
                killedStillHeld.add("token " + t
                        + h.validUntil()
                                .filter(u -> !u.equals(Instant.MAX))
                                .map(u -> ", lease until " + u)
                                .orElse(""));
            }
        }
        return out;
    }

    int exitCode() {
        if (!violations.isEmpty()) {
            return VIOLATED;
        }
        return problems.isEmpty() ? HELD : INCOMPLETE;
    }

    long lostIncrements() {
        return counterEnd < 0 || partial ? -1 : Math.max(0, counterStart + exclusive - counterEnd);
    }

    /** The one screen: {@code fileSystem} lines (may be empty) come right after the heading. */
    String text(List<String> fileSystem, Path kept) {
        return VerifyReportText.render(this, fileSystem, kept);
    }

    /** 850ns, 41µs, 2.3ms, 1.25s. */
    static String nanos(long ns) {
        return VerifyReportText.nanos(ns);
    }

    /** One JSON object (one line). */
    String json(FileSystemProbe.Report fs, Path kept) {
        return VerifyReportJson.render(this, fs, kept);
    }

    @Override
    public String toString() {
        return "VerifyReport" + Arrays.asList(acquisitions, violations.size(), exitCode());
    }
}
