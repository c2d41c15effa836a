package dev.interlock.check;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Proves from workers' records that a lock excluded: the check behind {@code interlock verify} and
 * the project's multi-process tests. It needs no shared clock, so it works across hosts.
 *
 * <p><b>The counter rules (any hosts).</b> Every exclusive section reads a counter kept under the
 * lock and writes it back plus one; every shared section reads it. If the lock excludes, the k-th
 * exclusive section read k (from the start value), so:
 * <ul>
 *   <li>no two exclusive sections read the same value (else both wrote the same next value: a lost
 *       increment), and the final counter is the start plus the number of exclusive sections;</li>
 *   <li>tokens follow the order the counter proves: the exclusive section that read v has a larger
 *       token than the one that read v-1; a shared section that read v has a larger token than
 *       the exclusive section that wrote v, and a smaller one than the exclusive section that read
 *       v (it came before that writer, which waits for readers).</li>
 * </ul>
 * <b>The interval rules (sections on one monotonic clock: one host).</b> No exclusive section
 * overlaps any other section; a section that ended before another began has a smaller token when
 * either of the two is exclusive. No token is issued twice.
 *
 * <p><b>Killed holders.</b> A holder killed inside its section (SIGKILL: it cannot release, the
 * backend must recover the lock) leaves no record of its own; whoever killed it knows what it read
 * and when it was killed, and passes it as a <em>killed</em> section ending at the kill. It takes
 * part in every rule on times and tokens (nobody may enter before it was killed), but whether an
 * exclusive one wrote its increment is unknown (the kill may land before or after the write), so
 * each killed exclusive section may account for zero or one increment: the final counter lies
 * between the start plus the completed exclusive sections and that plus the killed exclusive
 * ones, and a completed writer may read the same value as a killed one (which then did not
 * write). Tokens still follow the counter: the writer of the value a killed section read has a
 * smaller token, the writers that read that value or the next a larger one.
 *
 * <p>Every violation names the sections involved (worker, token, value, times) as evidence.
 */
public final class ExclusionCheck {
    private static final int MAX_VIOLATIONS = 50;

    private ExclusionCheck() {}

    /** What the records showed. */
    public record Report(int sections, int exclusive, List<String> violations) {
        public Report {
            violations = List.copyOf(violations);
        }

        public boolean ok() {
            return violations.isEmpty();
        }
    }

    /**
     * Checks the interval and token rules only (records without counter values).
     */
    public static Report check(List<Section> all) {
        return check(all, -1, -1);
    }

    /**
     * Checks every rule.
     *
     * @param start the counter before the run, or -1 to skip the counter rules
     * @param end the counter after the run, or -1 if it could not be read
     */
    public static Report check(List<Section> all, long start, long end) {
        return check(all, List.of(), start, end);
    }

    /**
     * Checks every rule, with sections whose holder was killed inside them (see the class comment).
     * {@link Report#sections()} counts both lists, {@link Report#exclusive()} the completed
     * exclusive sections only.
     *
     * @param completed the sections that ended normally
     * @param killed the sections whose holder was killed inside them, each ending when it was killed
     * @param start the counter before the run, or -1 to skip the counter rules
     * @param end the counter after the run, or -1 if it could not be read
     */
    public static Report check(List<Section> completed, List<Section> killed, long start, long end) {
        int ex = 0;
        for (Section s : completed) {
            if (s.exclusive()) {
                ex++;
            }
        }
        List<Section> all = new ArrayList<>(completed);
        all.addAll(killed);
        // Three families of evidence, each kept to MAX_VIOLATIONS while it is gathered: the counter
        // (lost increments, values against tokens), overlaps and order on one clock, and repeated
        // tokens (which a backend whose tokens are per process repeats by the thousand). The
        // report keeps a share of each, so one family cannot crowd the others out.
        List<String> counter = new ArrayList<>();
        if (start >= 0) {
            counterRules(completed, killed, start, end, ex, counter);
        }
        Map<String, List<Section>> byClock = new TreeMap<>();
        for (Section s : all) {
            if (!s.clock().equals("-")) {
                byClock.computeIfAbsent(s.clock(), c -> new ArrayList<>()).add(s);
            }
        }
        List<String> intervals = new ArrayList<>();
        for (List<Section> one : byClock.values()) {
            if (intervals.size() <= MAX_VIOLATIONS) {
                intervalRules(one, intervals);
            }
        }
        List<String> tokens = new ArrayList<>();
        duplicateTokens(all, tokens);
        List<String> violations = share(List.of(counter, intervals, tokens));
        return new Report(all.size(), ex, violations);
    }

    /**
     * At most MAX_VIOLATIONS of the families' violations, in family order: each non-empty family
     * gets an equal share (what a smaller family leaves goes to the next ones), its first ones.
     */
    private static List<String> share(List<List<String>> families) {
        int total = 0;
        for (List<String> f : families) {
            total += f.size();
        }
        if (total <= MAX_VIOLATIONS) {
            List<String> all = new ArrayList<>();
            families.forEach(all::addAll);
            return all;
        }
        int[] take = new int[families.size()];
        int left = MAX_VIOLATIONS;
        boolean changed = true;
        while (left > 0 && changed) {
            changed = false;
            int open = 0;
            for (int i = 0; i < families.size(); i++) {
                if (take[i] < families.get(i).size()) {
                    open++;
                }
            }
            int each = Math.max(1, left / Math.max(1, open));
            for (int i = 0; i < families.size() && left > 0; i++) {
                int more = Math.min(Math.min(each, left), families.get(i).size() - take[i]);
                if (more > 0) {
                    take[i] += more;
                    left -= more;
                    changed = true;
                }
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < families.size(); i++) {
            out.addAll(families.get(i).subList(0, take[i]));
        }
        return out;
    }

    /**
     * The most violations a report lists; a report with this many may have left others out. When
     * there are more, every kind found (counter, overlap and order on one clock, repeated tokens)
     * keeps a share of the list.
     */
    public static int maxViolations() {
        return MAX_VIOLATIONS;
    }

    private static void duplicateTokens(List<Section> all, List<String> violations) {
        Map<Long, Section> seen = new HashMap<>();
        for (Section s : all) {
            Section before = seen.putIfAbsent(s.token(), s);
            if (before != null) {
                violations.add("token " + s.token() + " issued twice: " + before + " and " + s);
                if (violations.size() > MAX_VIOLATIONS) {
                    return;
                }
            }
        }
    }

    private static void counterRules(
            List<Section> all, List<Section> killed, long start, long end, int exclusive, List<String> violations) {
        int killedEx = 0;
        for (Section k : killed) {
            if (k.exclusive()) {
                killedEx++;
            }
        }
        if (end >= 0 && killedEx == 0 && end != start + exclusive) {
            violations.add("counter is " + end + " after " + exclusive + " exclusive sections from " + start + ": "
                    + Math.abs(start + exclusive - end) + (end < start + exclusive ? " increments lost" : " too many"));
        } else if (end >= 0 && end < start + exclusive) {
            violations.add("counter is " + end + " after " + exclusive + " completed exclusive sections from " + start
                    + ": " + (start + exclusive - end) + " increments lost");
        } else if (end >= 0 && end > start + exclusive + killedEx) {
            violations.add("counter is " + end + " after " + exclusive + " completed exclusive sections and " + killedEx
                    + " killed ones (each may have written or not) from " + start + ": "
                    + (end - start - exclusive - killedEx)
                    + " too many");
        }
        Map<Long, Section> writerThatRead = new HashMap<>();
        for (Section s : all) {
            if (!s.exclusive() || s.read() < 0) {
                continue;
            }
            Section other = writerThatRead.putIfAbsent(s.read(), s);
            if (other != null && violations.size() <= MAX_VIOLATIONS) {
                violations.add("lost increment: two exclusive sections read " + s.read() + " and both wrote "
                        + (s.read() + 1) + ": " + other + " and " + s);
            }
        }
        for (Section k : killed) {
            if (!k.exclusive() || k.read() < 0 || violations.size() > MAX_VIOLATIONS) {
                continue;
            }
            Section wrote = writerThatRead.get(k.read() - 1);
            if (wrote != null && wrote.token() >= k.token()) {
                violations.add(
                        "token order: killed " + k + " read what " + wrote + " wrote, yet its token is not larger");
            }
            for (long v = k.read(); v <= k.read() + 1; v++) {
                Section after = writerThatRead.get(v);
                if (after != null && after.token() <= k.token()) {
                    violations.add("token order: " + after + " read " + v + " after killed " + k + " read " + k.read()
                            + ", yet its token is not larger");
                }
            }
        }
        List<Long> values = new ArrayList<>(writerThatRead.keySet());
        Collections.sort(values);
        for (int i = 1; i < values.size() && violations.size() <= MAX_VIOLATIONS; i++) {
            Section a = writerThatRead.get(values.get(i - 1));
            Section b = writerThatRead.get(values.get(i));
            if (a.token() >= b.token()) {
                violations.add("token order: " + a + " wrote before " + b + " read, yet its token is not smaller");
            }
        }
        for (Section r : all) {
            if (r.exclusive() || r.read() < 0 || violations.size() > MAX_VIOLATIONS) {
                continue;
            }
            Section wrote = writerThatRead.get(r.read() - 1);
            if (wrote != null && wrote.token() >= r.token()) {
                violations.add("token order: " + r + " read what " + wrote + " wrote, yet its token is not larger");
            }
            Section next = writerThatRead.get(r.read());
            if (next != null && next.token() <= r.token()) {
                violations.add("token order: " + r + " read " + r.read() + " before " + next
                        + " changed it, yet its token is not smaller");
            }
        }
    }

    private static void intervalRules(List<Section> all, List<String> violations) {
        List<Section> byEnter = new ArrayList<>(all);
        byEnter.sort(Comparator.comparingLong(Section::enter));
        // Overlap: sweeping by entry time, an earlier section overlaps this one iff it exits after this entry.
        Section latestAny = null;
        Section latestEx = null;
        for (Section b : byEnter) {
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
            if (violations.size() > MAX_VIOLATIONS) {
                return;
            }
        }
        // Tokens: a section that ended before b entered has a smaller token, when either of the two is
        // exclusive. (Two shared sections prove nothing: a reader may take its token, be descheduled
        // before it records its entry, and meanwhile another reader comes and goes.)
        List<Section> byExit = new ArrayList<>(all);
        byExit.sort(Comparator.comparingLong(Section::exit));
        int j = 0;
        Section maxEnded = null;
        Section maxEndedEx = null;
        Set<String> reported = new HashSet<>();
        for (Section b : byEnter) {
            while (j < byExit.size() && byExit.get(j).exit() < b.enter()) {
                Section a = byExit.get(j++);
                if (maxEnded == null || a.token() > maxEnded.token()) {
                    maxEnded = a;
                }
                if (a.exclusive() && (maxEndedEx == null || a.token() > maxEndedEx.token())) {
                    maxEndedEx = a;
                }
            }
            Section before = b.exclusive() ? maxEnded : maxEndedEx;
            if (before != null && before.token() >= b.token() && reported.add(before + "|" + b)) {
                violations.add("token order: " + before + " ended before " + b + " began");
                if (violations.size() > MAX_VIOLATIONS) {
                    return;
                }
            }
        }
    }
}
