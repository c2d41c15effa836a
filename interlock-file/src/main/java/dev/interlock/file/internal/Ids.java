package dev.interlock.file.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Internal API of Interlock (not for applications; may change in any release): user and group names for messages, and the process's umask and effective uid, from /proc and /etc.
 */
public final class Ids {
    private Ids() {}

    public static String user(int uid) {
        return describe(uid, Path.of("/etc/passwd"));
    }

    public static String group(int gid) {
        return describe(gid, Path.of("/etc/group"));
    }

    private static String describe(int id, Path db) {
        long unsigned = id & 0xffffffffL;
        try {
            for (String line : Files.readAllLines(db, StandardCharsets.UTF_8)) {
                String[] f = line.split(":", -1);
                if (f.length > 2 && f[2].equals(Long.toString(unsigned))) {
                    return f[0] + " (" + unsigned + ")";
                }
            }
        } catch (IOException | RuntimeException e) {
            // a number is enough
        }
        return Long.toString(unsigned);
    }

    /** The umask, from /proc/self/status (reading it with umask(2) would change it for a moment for every thread). */
    public static int umask() {
        String v = status("Umask:");
        try {
            return v == null ? 022 : Integer.parseInt(v.trim(), 8);
        } catch (NumberFormatException e) {
            return 022;
        }
    }

    public static int effectiveUid() {
        String v = status("Uid:");
        try {
            return v == null ? -1 : Integer.parseInt(v.trim().split("\\s+")[1]);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private static String status(String key) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith(key)) {
                    return line.substring(key.length());
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return null;
    }
}
