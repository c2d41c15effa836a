package dev.interlock.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hand-offs measured from workers' records: the time from the release of a lock by one holder to
 * its grant to another that was waiting for it, the latency {@code interlock verify} reports.
 *
 * <p>A section B that had to wait was let in by the last release before its grant that it could
 * have been waiting for: the last section (of any mode) to leave before B entered when B is
 * exclusive (it waits for every holder), the last exclusive section to leave when B is shared
 * (readers wait only for writers). If B asked for the lock before that release, the hand-off is
 * B's entry minus that section's exit. Sections that did not wait, and pairs of readers, are no
 * hand-off. Times are compared only between sections of one clock (one host): hand-offs between
 * hosts cannot be measured without comparing clocks, and are left out.
 *
 * <p>Exit times are taken just before the release begins and entry times just after the grant,
 * so a hand-off includes the release, the wake-up of the waiter and its grant.
 */
public final class Handoffs {
    private Handoffs() {}

    /**
     * One hand-off.
     *
     * @param from the section whose release let {@code to} in
     * @param to the section that was waiting for it
     * @param nanos {@code to.enter() - from.exit()}
     */
    public record Handoff(Section from, Section to, long nanos) {}

    /** The hand-offs among {@code sections}, grouped by clock (sections of different clocks are never paired). */
    public static List<Handoff> of(List<Section> sections) {
        Map<String, List<Section>> byClock = new TreeMap<>();
        for (Section s : sections) {
            if (!s.clock().equals("-")) {
                byClock.computeIfAbsent(s.clock(), c -> new ArrayList<>()).add(s);
            }
        }
        List<Handoff> out = new ArrayList<>();
        for (List<Section> one : byClock.values()) {
            oneClock(one, out);
        }
        return out;
    }

    private static void oneClock(List<Section> all, List<Handoff> out) {
        List<Section> byEnter = new ArrayList<>(all);
        byEnter.sort(Comparator.comparingLong(Section::enter));
        List<Section> byExit = new ArrayList<>(all);
        byExit.sort(Comparator.comparingLong(Section::exit));
        int j = 0;
        Section lastAny = null;
        Section lastEx = null;
        for (Section b : byEnter) {
            while (j < byExit.size() && byExit.get(j).exit() <= b.enter()) {
                Section a = byExit.get(j++);
                lastAny = a;
                if (a.exclusive()) {
                    lastEx = a;
                }
            }
            Section a = b.exclusive() ? lastAny : lastEx;
            if (a != null && a != b && b.asked() < a.exit()) {
                out.add(new Handoff(a, b, b.enter() - a.exit()));
            }
        }
    }

    /**
     * The {@code p}-th percentile of sorted values by the nearest-rank method (the smallest value
     * with at least {@code p} percent of the values at or below it); -1 if there are none.
     *
     * @param sorted values in ascending order
     * @param p between 0 (exclusive) and 100 (inclusive)
     */
    public static long percentile(long[] sorted, double p) {
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        }
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }
}
