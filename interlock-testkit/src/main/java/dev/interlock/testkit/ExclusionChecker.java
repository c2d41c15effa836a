package dev.interlock.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks the critical sections logged by workers: no exclusive section overlaps any other
 * section; fencing tokens increase with acquisition order (a section that ended before another
 * began has a smaller token whenever one of the two is exclusive); no token repeats.
 */
public final class ExclusionChecker {
    private ExclusionChecker() {}

    /** One critical section. */
    public record Interval(String source, boolean exclusive, long token, long enter, long exit) {
        @Override
        public String toString() {
            return (exclusive ? "EX" : "SH") + " token " + token + " [" + enter + ", " + exit + "] from " + source;
        }
    }

    /** What the logs showed. */
    public record Report(int sections, int exclusive, List<String> violations) {
        public boolean ok() {
            return violations.isEmpty();
        }
    }

    public static List<Interval> read(List<Path> logs) throws IOException {
        List<Interval> all = new ArrayList<>();
        for (Path p : logs) {
            for (String line : Files.readAllLines(p)) {
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.trim().split(" ");
                all.add(new Interval(p.getFileName().toString(), f[0].equals("EX"), Long.parseLong(f[1]),
                        Long.parseLong(f[2]), Long.parseLong(f[3])));
            }
        }
        return all;
    }

    public static Report check(List<Interval> all) {
        List<String> violations = new ArrayList<>();
        List<Interval> byEnter = new ArrayList<>(all);
        byEnter.sort(Comparator.comparingLong(Interval::enter));
        // Overlap: sweeping by entry time, an earlier section overlaps this one iff it exits after this entry.
        Interval latestAny = null;
        Interval latestEx = null;
        for (Interval b : byEnter) {
            if (b.exclusive() && latestAny != null && latestAny.exit() > b.enter()) {
                violations.add("overlap: " + latestAny + " and " + b);
            } else if (!b.exclusive() && latestEx != null && latestEx.exit() > b.enter()) {
                violations.add("overlap: " + latestEx + " and " + b);
            }
            if (latestAny == null || b.exit() > latestAny.exit()) {
                latestAny = b;
            }
            if (b.exclusive() && (latestEx == null || b.exit() > latestEx.exit())) {
                latestEx = b;
            }
            if (violations.size() > 20) {
                break;
            }
        }
        // Tokens: a section that ended before b entered has a smaller token, when either of the two is
        // exclusive. (Two shared sections prove nothing: a reader may take its token, be descheduled
        // before it logs its entry, and meanwhile another reader comes and goes.)
        List<Interval> byExit = new ArrayList<>(all);
        byExit.sort(Comparator.comparingLong(Interval::exit));
        int j = 0;
        Interval maxEnded = null;
        Interval maxEndedEx = null;
        for (Interval b : byEnter) {
            while (j < byExit.size() && byExit.get(j).exit() < b.enter()) {
                Interval a = byExit.get(j++);
                if (maxEnded == null || a.token() > maxEnded.token()) {
                    maxEnded = a;
                }
                if (a.exclusive() && (maxEndedEx == null || a.token() > maxEndedEx.token())) {
                    maxEndedEx = a;
                }
            }
            Interval before = b.exclusive() ? maxEnded : maxEndedEx;
            if (before != null && before.token() >= b.token()) {
                violations.add("token order: " + before + " ended before " + b + " began");
                if (violations.size() > 40) {
                    break;
                }
            }
        }
        Set<Long> seen = new HashSet<>();
        for (Interval i : all) {
            if (!seen.add(i.token())) {
                violations.add("token " + i.token() + " issued twice");
                break;
            }
        }
        int ex = (int) all.stream().filter(Interval::exclusive).count();
        return new Report(all.size(), ex, violations);
    }
}
