package dev.interlock.cli;

import dev.interlock.check.Section;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Proves from the workers' records of {@code interlock verify --limit N} that the semaphore never
 * let more than N in (see {@link PermitSlots} for the slots): the check behind a permit run, as
 * {@link dev.interlock.check.ExclusionCheck} is for a lock.
 *
 * <ul>
 *   <li><b>Slots (any hosts, no clock):</b> a holder that found all N slots taken proves N+1
 *       inside at once, unless one of the N was a holder killed inside its section (its permit may
 *       have come back before {@code verify} gave its slot back).</li>
 *   <li><b>Tokens:</b> no token is issued twice; on one clock, a permit released before another
 *       was asked for has the smaller token (its grant came first, whenever each process ran).</li>
 *   <li><b>Overlaps (one clock):</b> never more than N sections at once. Entry is taken after the
 *       grant and exit before the release, so a correct semaphore never shows more; the most seen
 *       at once is reported.</li>
 * </ul>
 * A killed holder's permit has come back once N other holders are inside at once on its host's
 * clock (with N live holders, the killed one's permit cannot be among those held): the recovery
 * of each kill is the time from the kill to that moment.
 */
final class PermitCheck {
    private static final int MAX_PER_RULE = 20;

    private PermitCheck() {}

    /** A holder that found every slot taken, and who held them ({@code SOURCE TOKEN} each, or {@code (free)}). */
    record FullSlots(String source, long token, List<String> occupants) {}

    /**
     * What the records showed.
     *
     * @param mostAtOnce the most sections held at once on one clock
     * @param fullButKilled holders that found every slot taken with a killed holder's among them (not counted)
     * @param recoveries per killed section, in order: nanoseconds from the kill to N others held at
     *     once on its clock, or {@link VerifyReport#NO_GRANT} if that was not seen before the end
     * @param truncated some rule found more than {@value #MAX_PER_RULE} violations: only that many are listed
     */
    record Report(
            List<String> violations, int mostAtOnce, int fullButKilled, List<Long> recoveries, boolean truncated) {}

    static Report check(int limit, List<Section> completed, List<Section> killed, List<FullSlots> full) {
        List<String> violations = new ArrayList<>();
        Set<String> killedHolders = killed.stream()
                .map(k -> PermitSlots.holder(k.source(), k.token()))
                .collect(Collectors.toSet());
        int fullButKilled = 0;
        int shown = 0;
        boolean truncated;
        for (FullSlots f : full) {
            if (f.occupants().stream().anyMatch(killedHolders::contains)) {
                fullButKilled++;
            } else if (shown++ < MAX_PER_RULE) {
                violations.add("more than " + limit + " held at once: " + f.source() + " (token " + f.token()
                        + ") found all " + limit + " slots taken, by " + String.join(", ", f.occupants()));
            }
        }
        truncated = shown > MAX_PER_RULE;
        List<Section> all = new ArrayList<>(completed);
        all.addAll(killed);
        truncated |= duplicateTokens(all, violations);
        Map<String, List<Section>> byClock = new TreeMap<>();
        for (Section s : all) {
            if (!s.clock().equals("-")) {
                byClock.computeIfAbsent(s.clock(), c -> new ArrayList<>()).add(s);
            }
        }
        int most = 0;
        Map<String, long[]> fullMoments = new HashMap<>();
        for (Map.Entry<String, List<Section>> one : byClock.entrySet()) {
            truncated |= tokenOrder(one.getValue(), violations);
            Sweep sweep = sweep(limit, one.getValue(), violations);
            truncated |= sweep.truncated;
            most = Math.max(most, sweep.most);
            fullMoments.put(one.getKey(), sweep.reachedLimitAt);
        }
        List<Long> recoveries = new ArrayList<>();
        for (Section k : killed) {
            long[] at = fullMoments.getOrDefault(k.clock(), new long[0]);
            int i = firstAtOrAfter(at, k.exit());
            recoveries.add(i < at.length ? at[i] - k.exit() : VerifyReport.NO_GRANT);
        }
        return new Report(violations, most, fullButKilled, recoveries, truncated);
    }

    /** Returns whether there were more than it listed. */
    private static boolean duplicateTokens(List<Section> all, List<String> violations) {
        Map<Long, Section> seen = new HashMap<>();
        int shown = 0;
        for (Section s : all) {
            Section before = seen.putIfAbsent(s.token(), s);
            if (before != null && shown++ < MAX_PER_RULE) {
                violations.add("token " + s.token() + " issued twice: " + describe(before) + " and " + describe(s));
            }
        }
        return shown > MAX_PER_RULE;
    }

    /** A permit released before another was asked for has the smaller token; returns whether there were more than it listed. */
    private static boolean tokenOrder(List<Section> one, List<String> violations) {
        List<Section> byAsked = new ArrayList<>(one);
        byAsked.sort(Comparator.comparingLong(Section::asked));
        List<Section> byExit = new ArrayList<>(one);
        byExit.sort(Comparator.comparingLong(Section::exit));
        int j = 0;
        int shown = 0;
        Section maxEnded = null;
        for (Section b : byAsked) {
            while (j < byExit.size() && byExit.get(j).exit() < b.asked()) {
                Section a = byExit.get(j++);
                if (maxEnded == null || a.token() > maxEnded.token()) {
                    maxEnded = a;
                }
            }
            if (maxEnded != null && maxEnded.token() >= b.token() && shown++ < MAX_PER_RULE) {
                violations.add("token order: " + describe(maxEnded) + " was released before " + describe(b)
                        + " was asked for, yet its token is not smaller");
            }
        }
        return shown > MAX_PER_RULE;
    }

    /** The most sections at once, the moments the count reached the limit, and an overlap of more than the limit. */
    private record Sweep(int most, long[] reachedLimitAt, boolean truncated) {}

    private static Sweep sweep(int limit, List<Section> one, List<String> violations) {
        List<Section> byEnter = new ArrayList<>(one);
        byEnter.sort(Comparator.comparingLong(Section::enter));
        // Sections inside at the moment, by exit: those that left before the next entry drop out first.
        PriorityQueue<Section> inside = new PriorityQueue<>(Comparator.comparingLong(Section::exit));
        List<Long> reached = new ArrayList<>();
        int most = 0;
        int shown = 0;
        for (Section b : byEnter) {
            while (!inside.isEmpty() && inside.peek().exit() <= b.enter()) {
                inside.poll();
            }
            inside.add(b);
            most = Math.max(most, inside.size());
            if (inside.size() == limit) {
                reached.add(b.enter());
            }
            if (inside.size() > limit && shown++ < MAX_PER_RULE) {
                violations.add("more than " + limit + " held at once on one host: " + inside.size()
                        + " sections overlap when " + describe(b) + " entered: "
                        + inside.stream().map(PermitCheck::describe).collect(Collectors.joining(", ")));
            }
        }
        return new Sweep(most, reached.stream().mapToLong(Long::longValue).toArray(), shown > MAX_PER_RULE);
    }

    /** {@code permit token 5 slot 2 [ENTER, EXIT] from w0@host}: a section of a permit run (its READ is the slot). */
    static String describe(Section s) {
        return "permit token " + s.token() + (s.read() >= 0 ? " slot " + s.read() : " no slot") + " [" + s.enter()
                + ", " + s.exit() + "] from " + s.source();
    }

    private static int firstAtOrAfter(long[] sorted, long t) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] < t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
