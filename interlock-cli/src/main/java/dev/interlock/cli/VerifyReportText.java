package dev.interlock.cli;

import dev.interlock.check.Handoffs;
import dev.interlock.spi.support.Durations;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A {@link VerifyReport} as the one screen {@code interlock verify} prints. */
final class VerifyReportText {
    private VerifyReportText() {}

    /** The one screen: {@code fileSystem} lines (may be empty) come right after the heading. */
    static String render(VerifyReport r, List<String> fileSystem, Path kept) {
        StringBuilder sb = new StringBuilder();
        boolean permits = r.setup.limit() > 0;
        sb.append("interlock verify: ")
                .append(r.setup.backend())
                .append(permits ? ", semaphore '" : ", lock '")
                .append(r.setup.name())
                .append(
                        permits
                                ? "' of " + r.setup.limit() + (r.setup.limit() == 1 ? " permit, " : " permits, ")
                                : "', ");
        if (r.setup.runId() != null) {
            sb.append(r.hosts.size())
                    .append(" hosts (run ")
                    .append(r.setup.runId())
                    .append("), ");
        }
        sb.append(processesText(r))
                .append(", ")
                .append(Durations.format(Duration.ofNanos(r.setup.durationNanos())))
                .append(permits ? "" : ", " + Math.round(r.setup.sharedRatio() * 100) + "% shared")
                .append(r.setup.crashTest() ? ", crash test" : "")
                .append('\n');
        for (String f : fileSystem) {
            row(sb, "file system", f);
        }
        for (String w : r.warnings) {
            row(sb, "warning", w);
        }
        if (r.setup.runId() != null) {
            for (VerifyHostLog.HostLog h : r.hosts) {
                row(
                        sb,
                        "host",
                        h.host() + ": " + h.processes() + " processes, "
                                + h.sections().size() + " acquisitions in "
                                + Durations.format(Duration.ofNanos(h.runNanos())));
            }
        }
        if (permits) {
            row(
                    sb,
                    "acquisitions",
                    r.acquisitions + " permits" + (r.killedBy.isEmpty() ? "" : " (" + r.killedBy.size() + " killed)")
                            + ", " + r.throughput + "/s");
        } else {
            row(
                    sb,
                    "acquisitions",
                    r.acquisitions + " (" + r.exclusive + " exclusive, " + r.shared + " shared"
                            + (r.killedBy.isEmpty() ? "" : ", " + r.killedBy.size() + " killed") + "), "
                            + r.throughput + "/s");
        }
        String verdictRow = permits ? "limit" : "exclusion";
        if (r.violations.isEmpty() && permits) {
            row(
                    sb,
                    verdictRow,
                    "held: at most " + r.setup.limit() + " held at once (every holder found a free slot among "
                            + r.setup.limit() + ", tokens unique and in order); the most seen at once"
                            + (r.hosts.size() > 1 ? " on one host" : "") + ": " + Math.max(0, r.mostAtOnce)
                            + (r.fullButKilled > 0
                                    ? "; " + r.fullButKilled + " found every slot taken, one by a killed holder"
                                            + " whose slot was not yet given back (not counted)"
                                    : ""));
        } else if (r.violations.isEmpty()) {
            row(sb, "exclusion", "held: 0 violations (no lost increment, no overlap, tokens in order)");
        } else {
            List<String> shown = sample(r.violations);
            row(
                    sb,
                    verdictRow,
                    "VIOLATED: " + (r.violationsTruncated ? "at least " : "") + r.violations.size() + " violations"
                            + (shown.size() < r.violations.size()
                                    ? ", " + shown.size() + " of them (up to 3 of each kind):"
                                    : ":"));
            for (String v : shown) {
                sb.append("  ").append(v).append('\n');
            }
        }
        if (permits) {
            row(sb, "returned", returnedLine(r));
        } else {
            row(sb, "counter", counterLine(r));
        }
        if (r.handoffs.length == 0) {
            row(sb, "hand-off", "none measured (no acquisition waited for a release on the same host)");
        } else {
            row(
                    sb,
                    "hand-off",
                    "p50 " + nanos(Handoffs.percentile(r.handoffs, 50)) + ", p95 "
                            + nanos(Handoffs.percentile(r.handoffs, 95))
                            + ", p99 " + nanos(Handoffs.percentile(r.handoffs, 99)) + ", max "
                            + nanos(r.handoffs[r.handoffs.length - 1])
                            + " (" + r.handoffs.length + " hand-offs, release to grant)");
        }
        if (r.longestWait >= 0) {
            row(sb, "longest wait", nanos(r.longestWait) + " (" + r.longestWaitBy + ")");
        }
        if (r.setup.crashTest()) {
            if (r.killedBy.isEmpty()) {
                row(sb, "crash test", "no holder was killed (none entered an exclusive section when asked to)");
            } else {
                StringBuilder c = new StringBuilder();
                boolean noGrant = false;
                for (int i = 0; i < r.recoveries.size(); i++) {
                    long ns = r.recoveries.get(i);
                    noGrant |= ns == VerifyReport.NO_GRANT;
                    c.append(i == 0 ? "" : ", ")
                            .append(
                                    ns == VerifyReport.NO_GRANT
                                            ? "never (before the end)"
                                            : ns == VerifyReport.NO_WAITER ? "- (nobody here was waiting)" : nanos(ns));
                }
                row(
                        sb,
                        "crash test",
                        r.killedBy.size() + (r.killedBy.size() == 1 ? " holder" : " holders")
                                + " killed (SIGKILL) inside their section; "
                                + (permits
                                        ? "the permit back (" + r.setup.limit()
                                                + " others held at once on the same host) after "
                                        : "next grant after ")
                                + c
                                + (noGrant
                                        ? "; a lease-based backend frees a dead holder's lock when its lease runs out"
                                                + " (a shorter --lease, or a longer --duration)"
                                        : ""));
            }
        }
        for (String p : r.problems) {
            row(sb, "problem", p);
        }
        String keptNote = kept != null ? "; the records are in " + kept : "";
        switch (r.exitCode()) {
            case VerifyReport.HELD:
                row(
                        sb,
                        "result",
                        (permits ? "at most " + r.setup.limit() + " held at once" : "mutual exclusion held")
                                + " (exit 0)" + keptNote);
                break;
            case VerifyReport.VIOLATED:
                row(
                        sb,
                        "result",
                        (permits ? "SEMAPHORE LIMIT VIOLATED" : "MUTUAL EXCLUSION VIOLATED")
                                + " (exit 2): do not trust this lock space as it is; the evidence is"
                                + " above" + (kept != null ? keptNote : " (keep every record with --keep DIR)"));
                break;
            default:
                row(
                        sb,
                        "result",
                        "incomplete (exit 1): nothing was proven either way; see the problems above" + keptNote);
                break;
        }
        return sb.toString();
    }

    /** Up to 3 violations of each kind (the counter, lost increments, overlaps, token order...), in order. */
    static List<String> sample(List<String> violations) {
        Map<String, Integer> perKind = new HashMap<>();
        List<String> out = new ArrayList<>();
        for (String v : violations) {
            String kind =
                    v.replaceFirst("^token \\d+ issued twice.*", "token twice").replaceFirst(":.*", "");
            if (perKind.merge(kind, 1, Integer::sum) <= 3) {
                out.add(v);
            }
        }
        return out;
    }

    private static String processesText(VerifyReport r) {
        return r.setup.runId() != null ? r.setup.processes() + " processes here" : r.setup.processes() + " processes";
    }

    /** Whether every permit of the run came back: the name lists none of the released ones. */
    private static String returnedLine(VerifyReport r) {
        String killed = r.killedStillHeld.isEmpty()
                ? ""
                : "; still held until their lease runs out, as a dead holder's permit is: the killed holders' "
                        + String.join(", ", r.killedStillHeld);
        if (r.notReturned.isEmpty()) {
            return "every released permit came back (the name lists none after the run)" + killed;
        }
        return r.notReturned.size() + " released permit(s) still listed after the run (see the violations)" + killed;
    }

    private static String counterLine(VerifyReport r) {
        if (r.counterText == null) {
            return "could not be read after the run";
        }
        if (r.counterEnd < 0) {
            return "'" + shorten(r.counterText) + "' after the run: not a number";
        }
        if (r.partial) {
            return r.counterEnd + " after the run, not compared: the records of "
                    + (r.setup.hostsExpected() - r.hosts.size()) + " host(s) are missing";
        }
        long expected = r.counterStart + r.exclusive;
        String after = r.counterEnd + " after " + r.exclusive + " exclusive sections"
                + (r.counterStart != 0 ? " from " + r.counterStart : "");
        if (r.killedExclusive > 0) {
            after += " and " + r.killedExclusive + " killed inside theirs (each may have written or not)";
            if (r.counterEnd >= expected && r.counterEnd <= expected + r.killedExclusive) {
                return after + ": no increment lost";
            }
        } else if (r.counterEnd == expected) {
            return after + ": no increment lost";
        }
        return r.counterEnd < expected
                ? after + ": " + (expected - r.counterEnd) + " increments lost"
                : after + ": " + (r.counterEnd - expected - r.killedExclusive) + " increments too many";
    }

    private static void row(StringBuilder sb, String label, String value) {
        sb.append(String.format(Locale.ROOT, "%-13s %s%n", label, value));
    }

    static String shorten(String s) {
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
}
