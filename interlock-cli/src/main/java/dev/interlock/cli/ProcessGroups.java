package dev.interlock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
        Map<Long, Long> parentOf = new HashMap<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"))) {
            for (Path p : procs) {
                String name = p.getFileName().toString();
                if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
                    continue;
                }
                long[] ppidPgrp = ppidAndGroup(p.resolve("stat"));
                if (ppidPgrp != null && ppidPgrp[1] == pgid && ppidPgrp[2] == 0) {
                    parentOf.put(Long.parseLong(name), ppidPgrp[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
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
        long[] f = ppidAndGroup(Path.of("/proc/" + pid + "/stat"));
        return f == null || f[2] == 1;
    }

    /**
     * Fields 4 and 5 (ppid, pgrp) of a {@code /proc/PID/stat} and 1 if its state (field 3) is
     * zombie or dead, else 0; null if it is gone or unreadable.
     */
    private static long[] ppidAndGroup(Path stat) {
        try {
            String s = Files.readString(stat, StandardCharsets.US_ASCII);
            // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ", 4);
            boolean gone = f[0].equals("Z") || f[0].equals("X") || f[0].equals("x");
            return new long[] {Long.parseLong(f[1]), Long.parseLong(f[2]), gone ? 1 : 0};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
