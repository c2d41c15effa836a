package dev.interlock.cli;

import dev.interlock.check.ExclusionCheck;
import dev.interlock.check.Handoffs;
import dev.interlock.check.Section;
import dev.interlock.spi.support.Durations;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The outcome of a verify run: reads what each host's workers recorded, proves exclusion with
 * {@link ExclusionCheck} (the counter rules across hosts, the interval rules among sections of one
 * clock), measures hand-offs, waits, throughput and crash recoveries, and prints it as one screen
 * or one JSON object.
 *
 * <p>A host's records live in one directory: {@code worker-N.log} (its workers' sections, see
 * {@link VerifyWorker}), {@code kills.log} (sections whose holder verify killed, each ending at
 * the kill) and {@code host} (who it was, how long it ran, which workers failed).
 */
final class VerifyReport {
    static final int HELD = ExitCodes.OK;
    /** Some rule was broken: the lock space does not exclude. */
    static final int VIOLATED = 2;
    /** The run could not finish (a worker failed or hung, a host did not join, nothing was acquired). */
    static final int INCOMPLETE = 1;

    private static final String HOST_FILE = "host";
    private static final String KILLS_FILE = "kills.log";
    private static final Pattern WORKER_LOG = Pattern.compile("worker-(\\d+)\\.log");

    /** A wait that had not ended when the worker was stopped. */
    record Wait(String source, long nanos) {}

    /** What one host recorded. */
    record HostLog(String host, String clock, int processes, long runNanos, List<Section> sections, List<Section> killed,
            List<Wait> unfinished, List<String> torn, int lostLeases, List<VerifyWorkers.Failure> failures) {}

    /** What the run was: for the heading and the JSON. */
    record Setup(String backend, String name, int processes, long durationNanos, double sharedRatio, boolean crashTest,
            String runId, int hostsExpected) {}

    // ---- host records -------------------------------------------------------------------------

    /** Writes the {@code host} file and the kills of one host's run into its directory. */
    static void writeHost(Path dir, String host, String clock, int processes, VerifyWorkers.Outcome o) throws IOException {
        StringBuilder k = new StringBuilder();
        for (Section s : o.killed()) {
            k.append(encode(s.source())).append(' ').append(s.format()).append('\n');
        }
        Files.writeString(dir.resolve(KILLS_FILE), k.toString(), StandardCharsets.UTF_8);
        StringBuilder h = new StringBuilder("interlock-verify-host 1\n");
        h.append("host ").append(encode(host)).append('\n');
        h.append("clock ").append(clock).append('\n');
        h.append("processes ").append(processes).append('\n');
        h.append("run ").append(o.endNanos() - o.goNanos()).append('\n');
        for (VerifyWorkers.Failure f : o.failures()) {
            h.append("failure ").append(encode(f.worker())).append(' ').append(f.exitCode()).append(' ').append(f.stuck())
                    .append(' ').append(encode(f.stderr().isEmpty() ? "-" : f.stderr())).append('\n');
        }
        Path tmp = dir.resolve(HOST_FILE + ".tmp");
        Files.writeString(tmp, h.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(HOST_FILE), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    static boolean hostDone(Path dir) {
        return Files.exists(dir.resolve(HOST_FILE));
    }

    /** Reads a host's directory (see the class comment). */
    static HostLog readHost(Path dir) throws IOException {
        String host = dir.getFileName().toString();
        String clock = "-";
        int processes = 0;
        long run = 0;
        List<VerifyWorkers.Failure> failures = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve(HOST_FILE), StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "host":
                    host = decode(f[1]);
                    break;
                case "clock":
                    clock = f[1];
                    break;
                case "processes":
                    processes = Integer.parseInt(f[1]);
                    break;
                case "run":
                    run = Long.parseLong(f[1]);
                    break;
                case "failure":
                    String err = decode(f[4]);
                    failures.add(new VerifyWorkers.Failure(decode(f[1]), Integer.parseInt(f[2]), err.equals("-") ? "" : err,
                            Boolean.parseBoolean(f[3])));
                    break;
                default:
                    break;
            }
        }
        List<Section> sections = new ArrayList<>();
        List<Wait> unfinished = new ArrayList<>();
        List<String> torn = new ArrayList<>();
        int lost = 0;
        List<Path> logs = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "worker-*.log")) {
            ds.forEach(logs::add);
        }
        logs.sort(null);
        for (Path log : logs) {
            Matcher m = WORKER_LOG.matcher(log.getFileName().toString());
            if (!m.matches()) {
                continue;
            }
            String source = "w" + m.group(1) + "@" + host;
            for (String line : Files.readAllLines(log, StandardCharsets.US_ASCII)) {
                if (line.isBlank()) {
                    continue;
                }
                if (line.startsWith("# waiting ")) {
                    String[] f = line.split(" ");
                    unfinished.add(new Wait(source, Long.parseLong(f[3]) - Long.parseLong(f[2])));
                } else if (line.startsWith("# torn ")) {
                    torn.add(source + " read '" + line.substring(line.indexOf('\'') + 1, line.length() - 1)
                            + "' from the counter (token " + line.split(" ")[2] + ")");
                } else if (line.startsWith("# lost ")) {
                    lost++;
                } else if (!line.startsWith("#")) {
                    sections.add(Section.parse(source, line));
                }
            }
        }
        List<Section> killed = new ArrayList<>();
        Path kills = dir.resolve(KILLS_FILE);
        if (Files.exists(kills)) {
            for (String line : Files.readAllLines(kills, StandardCharsets.UTF_8)) {
                int sp = line.indexOf(' ');
                if (sp > 0) {
                    killed.add(Section.parse(decode(line.substring(0, sp)), line.substring(sp + 1)));
                }
            }
        }
        return new HostLog(host, clock, processes, run, sections, killed, unfinished, torn, lost, failures);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    // ---- analysis -----------------------------------------------------------------------------

    final Setup setup;
    final List<HostLog> hosts;
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

    private VerifyReport(Setup setup, List<HostLog> hosts, long start, String counterText, List<String> problems,
            List<String> warnings) {
        this.setup = setup;
        this.hosts = List.copyOf(hosts);
        this.problems.addAll(problems);
        this.warnings.addAll(warnings);
        List<Section> all = new ArrayList<>();
        List<Section> killed = new ArrayList<>();
        List<String> torn = new ArrayList<>();
        long waitMax = -1;
        String waitBy = null;
        boolean waitUnfinished = false;
        double perSecond = 0;
        for (HostLog h : hosts) {
            all.addAll(h.sections());
            killed.addAll(h.killed());
            torn.addAll(h.torn());
            lostLeases += h.lostLeases();
            for (Section s : h.sections()) {
                if (s.waitNanos() > waitMax) {
                    waitMax = s.waitNanos();
                    waitBy = s.source() + ", " + (s.exclusive() ? "EX" : "SH");
                    waitUnfinished = false;
                }
            }
            for (Wait w : h.unfinished()) {
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
                this.problems.add("worker " + f.worker() + (f.stuck() ? " did not stop within 15s after the end and was killed"
                        : " failed (exit status " + f.exitCode() + ")") + (f.stderr().isEmpty() ? "" : ": " + f.stderr().replace("\n", " | ")));
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
        ExclusionCheck.Report r = ExclusionCheck.check(all, killed, start, partial ? -1 : end);
        List<String> v = new ArrayList<>(r.violations());
        if (!torn.isEmpty()) {
            v.add("torn counter: " + torn.size() + " section(s) read a counter that was not a number, so two writers wrote it at"
                    + " once; the first: " + torn.get(0));
        }
        if (counterText != null && end < 0) {
            v.add("the counter holds '" + shorten(this.counterText) + "' after the run, not a number: two writers wrote it at once");
        }
        this.violationsTruncated = r.violations().size() >= ExclusionCheck.maxViolations();
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
        for (Section k : killed) {
            Long next = recovery.get(k);
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
            this.problems.add("no acquisition in " + Durations.format(java.time.Duration.ofNanos(setup.durationNanos()))
                    + ": the workers waited the whole time (is the lock held by someone else? see 'interlock status "
                    + setup.name() + "')");
        }
        if (lostLeases > 0) {
            this.warnings.add(lostLeases + " lease(s) were lost during their section (renewal failed or the lock was broken)");
        }
    }

    /**
     * Analyses the hosts' records.
     *
     * @param counterText the counter file's content after the run, or null if it could not be read
     * @param problems reasons the run is incomplete found before the analysis (missing hosts...)
     */
    static VerifyReport analyze(Setup setup, List<HostLog> hosts, long start, String counterText, List<String> problems,
            List<String> warnings) {
        return new VerifyReport(setup, hosts, start, counterText, problems, warnings);
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

    // ---- rendering ----------------------------------------------------------------------------

    /** The one screen: {@code fileSystem} lines (may be empty) come right after the heading. */
    String text(List<String> fileSystem, Path kept) {
        StringBuilder sb = new StringBuilder();
        sb.append("interlock verify: ").append(setup.backend()).append(", lock '").append(setup.name()).append("', ");
        if (setup.runId() != null) {
            sb.append(hosts.size()).append(" hosts (run ").append(setup.runId()).append("), ");
        }
        sb.append(processesText()).append(", ")
                .append(Durations.format(java.time.Duration.ofNanos(setup.durationNanos()))).append(", ")
                .append(Math.round(setup.sharedRatio() * 100)).append("% shared")
                .append(setup.crashTest() ? ", crash test" : "").append('\n');
        for (String f : fileSystem) {
            row(sb, "file system", f);
        }
        for (String w : warnings) {
            row(sb, "warning", w);
        }
        if (setup.runId() != null) {
            for (HostLog h : hosts) {
                row(sb, "host", h.host() + ": " + h.processes() + " processes, " + h.sections().size() + " acquisitions in "
                        + Durations.format(java.time.Duration.ofNanos(h.runNanos())));
            }
        }
        row(sb, "acquisitions", acquisitions + " (" + exclusive + " exclusive, " + shared + " shared"
                + (killedBy.isEmpty() ? "" : ", " + killedBy.size() + " killed") + "), " + throughput + "/s");
        if (violations.isEmpty()) {
            row(sb, "exclusion", "held: 0 violations (no lost increment, no overlap, tokens in order)");
        } else {
            List<String> shown = sample(violations);
            row(sb, "exclusion", "VIOLATED: " + (violationsTruncated ? "at least " : "") + violations.size() + " violations"
                    + (shown.size() < violations.size() ? ", " + shown.size() + " of them (up to 3 of each kind):" : ":"));
            for (String v : shown) {
                sb.append("  ").append(v).append('\n');
            }
        }
        row(sb, "counter", counterLine());
        if (handoffs.length == 0) {
            row(sb, "hand-off", "none measured (no acquisition waited for a release on the same host)");
        } else {
            row(sb, "hand-off", "p50 " + nanos(Handoffs.percentile(handoffs, 50)) + ", p95 " + nanos(Handoffs.percentile(handoffs, 95))
                    + ", p99 " + nanos(Handoffs.percentile(handoffs, 99)) + ", max " + nanos(handoffs[handoffs.length - 1])
                    + " (" + handoffs.length + " hand-offs, release to grant)");
        }
        if (longestWait >= 0) {
            row(sb, "longest wait", nanos(longestWait) + " (" + longestWaitBy + ")");
        }
        if (setup.crashTest()) {
            if (killedBy.isEmpty()) {
                row(sb, "crash test", "no holder was killed (none entered an exclusive section when asked to)");
            } else {
                StringBuilder c = new StringBuilder();
                boolean noGrant = false;
                for (int i = 0; i < recoveries.size(); i++) {
                    long ns = recoveries.get(i);
                    noGrant |= ns == NO_GRANT;
                    c.append(i == 0 ? "" : ", ").append(ns == NO_GRANT ? "never (before the end)"
                            : ns == NO_WAITER ? "- (nobody here was waiting)" : nanos(ns));
                }
                row(sb, "crash test", killedBy.size() + (killedBy.size() == 1 ? " holder" : " holders")
                        + " killed (SIGKILL) inside their section; next grant after " + c
                        + (noGrant ? "; a lease-based backend frees a dead holder's lock when its lease runs out"
                                + " (a shorter --lease, or a longer --duration)" : ""));
            }
        }
        for (String p : problems) {
            row(sb, "problem", p);
        }
        String keptNote = kept != null ? "; the records are in " + kept : "";
        switch (exitCode()) {
            case HELD:
                row(sb, "result", "mutual exclusion held (exit 0)" + keptNote);
                break;
            case VIOLATED:
                row(sb, "result", "MUTUAL EXCLUSION VIOLATED (exit 2): do not trust this lock space as it is; the evidence is"
                        + " above" + (kept != null ? keptNote : " (keep every record with --keep DIR)"));
                break;
            default:
                row(sb, "result", "incomplete (exit 1): nothing was proven either way; see the problems above" + keptNote);
                break;
        }
        return sb.toString();
    }

    /** Up to 3 violations of each kind (the counter, lost increments, overlaps, token order...), in order. */
    static List<String> sample(List<String> violations) {
        Map<String, Integer> perKind = new HashMap<>();
        List<String> out = new ArrayList<>();
        for (String v : violations) {
            String kind = v.replaceFirst("^token \\d+ issued twice.*", "token twice").replaceFirst(":.*", "");
            if (perKind.merge(kind, 1, Integer::sum) <= 3) {
                out.add(v);
            }
        }
        return out;
    }

    private String processesText() {
        return setup.runId() != null ? setup.processes() + " processes here" : setup.processes() + " processes";
    }

    private String counterLine() {
        if (counterText == null) {
            return "could not be read after the run";
        }
        if (counterEnd < 0) {
            return "'" + shorten(counterText) + "' after the run: not a number";
        }
        if (partial) {
            return counterEnd + " after the run, not compared: the records of " + (setup.hostsExpected() - hosts.size())
                    + " host(s) are missing";
        }
        long expected = counterStart + exclusive;
        String after = counterEnd + " after " + exclusive + " exclusive sections"
                + (counterStart != 0 ? " from " + counterStart : "");
        if (killedExclusive > 0) {
            after += " and " + killedExclusive + " killed inside theirs (each may have written or not)";
            if (counterEnd >= expected && counterEnd <= expected + killedExclusive) {
                return after + ": no increment lost";
            }
        } else if (counterEnd == expected) {
            return after + ": no increment lost";
        }
        return counterEnd < expected ? after + ": " + (expected - counterEnd) + " increments lost"
                : after + ": " + (counterEnd - expected - killedExclusive) + " increments too many";
    }

    private static void row(StringBuilder sb, String label, String value) {
        sb.append(String.format(Locale.ROOT, "%-13s %s%n", label, value));
    }

    private static String shorten(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    /** 850ns, 41µs, 2.3ms, 1.25s. */
    static String nanos(long ns) {
        if (ns < 1_000) {
            return ns + "ns";
        }
        if (ns < 1_000_000) {
            return ns / 1_000 + "µs";
        }
        if (ns < 1_000_000_000) {
            return String.format(Locale.ROOT, ns < 10_000_000 ? "%.2fms" : "%.1fms", ns / 1e6);
        }
        return String.format(Locale.ROOT, "%.2fs", ns / 1e9);
    }

    /** One JSON object (one line). */
    String json(FileSystemProbe.Report fs, Path kept) {
        Json j = new Json().beginObject();
        j.name("result").value(exitCode() == HELD ? "held" : exitCode() == VIOLATED ? "violated" : "incomplete");
        j.name("exitCode").value(exitCode());
        j.name("backend").value(setup.backend());
        j.name("name").value(setup.name());
        j.name("runId").value(setup.runId());
        j.name("processes").value(setup.processes());
        j.name("durationMs").value(setup.durationNanos() / 1_000_000);
        j.name("sharedPercent").value(Math.round(setup.sharedRatio() * 100));
        j.name("acquisitions").value(acquisitions);
        j.name("exclusive").value(exclusive);
        j.name("shared").value(shared);
        j.name("throughputPerSecond").value(throughput);
        j.name("violations").beginArray();
        for (String v : violations) {
            j.value(v);
        }
        j.endArray();
        j.name("violationsTruncated").value(violationsTruncated);
        j.name("counter").beginObject().name("start").value(counterStart);
        if (counterEnd >= 0) {
            j.name("end").value(counterEnd);
        } else {
            j.name("end").nullValue();
        }
        j.name("text").value(counterText);
        j.name("exclusiveSections").value(exclusive).name("killedExclusiveSections").value(killedExclusive);
        if (lostIncrements() >= 0) {
            j.name("lostIncrements").value(lostIncrements());
        } else {
            j.name("lostIncrements").nullValue();
        }
        j.endObject();
        j.name("handoff").beginObject().name("count").value(handoffs.length);
        for (int p : new int[] {50, 95, 99}) {
            if (handoffs.length > 0) {
                j.name("p" + p + "Micros").value(Handoffs.percentile(handoffs, p) / 1000);
            } else {
                j.name("p" + p + "Micros").nullValue();
            }
        }
        if (handoffs.length > 0) {
            j.name("maxMicros").value(handoffs[handoffs.length - 1] / 1000);
        } else {
            j.name("maxMicros").nullValue();
        }
        j.endObject();
        if (longestWait >= 0) {
            j.name("longestWait").beginObject().name("micros").value(longestWait / 1000).name("by").value(longestWaitBy)
                    .name("unfinished").value(longestWaitUnfinished).endObject();
        } else {
            j.name("longestWait").nullValue();
        }
        if (setup.crashTest()) {
            j.name("crashTest").beginObject().name("kills").value(killedBy.size()).name("recoveryMicros").beginArray();
            for (long r : recoveries) {
                if (r >= 0) {
                    j.value(r / 1000);
                } else {
                    j.nullValue();
                }
            }
            j.endArray().endObject();
        } else {
            j.name("crashTest").nullValue();
        }
        j.name("lostLeases").value(lostLeases);
        if (fs != null) {
            j.name("fileSystem").beginObject().name("path").value(fs.path().toString()).name("type").value(fs.type());
            j.name("statfsType").value(fs.magic() >= 0 ? String.format("0x%X", fs.magic()) : null);
            j.name("network").value(fs.network());
            j.name("nfsVersion").value(fs.nfsVersion());
            j.name("source").value(fs.mount() != null ? fs.mount().source() : null);
            j.name("mountPoint").value(fs.mount() != null ? fs.mount().mountPoint() : null);
            j.name("mountOptions").value(fs.mount() != null ? fs.mount().mountOptions() : null);
            j.name("superOptions").value(fs.mount() != null ? fs.mount().superOptions() : null);
            j.endObject();
        } else {
            j.name("fileSystem").nullValue();
        }
        j.name("warnings").beginArray();
        for (String w : warnings) {
            j.value(w);
        }
        j.endArray();
        j.name("problems").beginArray();
        for (String p : problems) {
            j.value(p);
        }
        j.endArray();
        j.name("hosts").beginArray();
        for (HostLog h : hosts) {
            j.beginObject().name("host").value(h.host()).name("clock").value(h.clock()).name("processes").value(h.processes())
                    .name("acquisitions").value(h.sections().size()).name("killed").value(h.killed().size())
                    .name("runMs").value(h.runNanos() / 1_000_000).endObject();
        }
        j.endArray();
        j.name("kept").value(kept != null ? kept.toString() : null);
        return j.endObject().toString();
    }

    @Override
    public String toString() {
        return "VerifyReport" + Arrays.asList(acquisitions, violations.size(), exitCode());
    }
}
