package dev.interlock.cli;

import dev.interlock.spi.support.ProcessIdentity;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** The processes of one process group, read from {@code /proc} (Linux). */
final class ProcessGroups {
    private ProcessGroups() {}

    /**
     * The processes of group {@code pgid} other than {@code guard} and the processes it started
     * (a sentinel and its timer): what a command left behind when it exited. Sorted by pid.
     * Zombies are not counted: they run nothing, and a sentinel killed with its group leaves its
     * timer as one, no longer its child, until init reaps it.
     */
    static List<Long> leftovers(long pgid, long guard) {
        Map<Long, Long> parentOf = ProcessIdentity.runnableMembers(pgid).orElse(Map.of());
        Set<Long> guards = new HashSet<>();
        guards.add(guard);
        boolean grew = true;
        while (grew) {
            grew = false;
            for (Map.Entry<Long, Long> e : parentOf.entrySet()) {
                if (guards.contains(e.getValue()) && guards.add(e.getKey())) {
                    grew = true;
                }
            }
        }
        List<Long> out = new ArrayList<>();
        for (Long pid : parentOf.keySet()) {
            if (!guards.contains(pid)) {
                out.add(pid);
            }
        }
        out.sort(null);
        return out;
    }

    /** True if {@code pid} is a zombie (dead, not yet reaped) or gone from {@code /proc}. */
    static boolean dead(long pid) {
        Optional<ProcessIdentity.ProcStat> stat = ProcessIdentity.stat(pid);
        return stat.isEmpty() || stat.get().exited();
    }
}
