package dev.interlock.file.internal;

import dev.interlock.Mode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Internal API of Interlock (not for applications; may change in any release). Reads
 * {@code /proc/locks}: the kernel's own list of who holds (and who waits for) a flock(2) lock on
 * an inode, for {@code flock:}'s {@code status} and to name who holds a directory's gate
 * ({@link DirectoryGate}). This also shows holders that are not Interlock, such as util-linux
 * {@code flock(1)}.
 */
public final class ProcLocks {
    private ProcLocks() {}

    public record Entry(Mode mode, long pid, boolean waiting) {}

    public static List<Entry> flocksOn(int devMajor, int devMinor, long ino) {
        return flocksOn(new long[] {NfsMountDevices.device(devMajor, devMinor)}, ino, ProcLocksFile.read());
    }

    /** The flock(2) locks on inode {@code ino} of any of {@code devices} ({@link NfsMountDevices#device}), in {@code procLocks}. */
    public static List<Entry> flocksOn(long[] devices, long ino, String procLocks) {
        List<Entry> out = new ArrayList<>();
        // No String.format and no regular expression: their first use costs a short command
        // (interlock status) a few milliseconds, more than reading the file.
        String suffix = ":" + ino;
        long[] lineIno = new long[1];
        for (String line : lines(procLocks)) {
            Entry e = entry(line, devices, suffix, lineIno);
            if (e != null && lineIno[0] == ino) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The flock(2) locks on any inode of {@code devices}, by inode: for a status that looks at many
     * files at once (the slot files of a {@code flock:} semaphore), reading {@code procLocks} once.
     */
    public static Map<Long, List<Entry>> flocksByInode(long[] devices, String procLocks) {
        Map<Long, List<Entry>> out = new HashMap<>();
        long[] lineIno = new long[1];
        for (String line : lines(procLocks)) {
            Entry e = entry(line, devices, null, lineIno);
            if (e != null) {
                List<Entry> on = out.get(lineIno[0]); // no lambda: linking one costs a short command's start
                if (on == null) {
                    on = new ArrayList<>(2);
                    out.put(lineIno[0], on);
                }
                on.add(e);
            }
        }
        return out;
    }

    /**
     * The entry of one line of /proc/locks if it is a FLOCK on one of {@code devices} (and, unless
     * {@code suffix} is null, on an inode its lock id ends with), its inode in {@code inoOut[0]};
     * else null.
     */
    private static Entry entry(String line, long[] devices, String suffix, long[] inoOut) {
        String[] f = fields(line);
        int i = 1;
        boolean waiting = false;
        if (f.length > i && f[i].equals("->")) {
            waiting = true;
            i++;
        }
        if (f.length < i + 5 || !f[i].equals("FLOCK")) {
            return null;
        }
        String id = f[i + 4];
        if (suffix != null && !id.endsWith(suffix)) {
            return null;
        }
        String[] parts = id.split(":");
        if (parts.length != 3) {
            return null;
        }
        try {
            if (!contains(
                    devices, NfsMountDevices.device(Long.parseLong(parts[0], 16), Long.parseLong(parts[1], 16)))) {
                return null;
            }
            inoOut[0] = Long.parseLong(parts[2]);
            Mode mode = f[i + 2].equals("WRITE") ? Mode.EXCLUSIVE : Mode.SHARED;
            return new Entry(mode, Long.parseLong(f[i + 3]), waiting);
        } catch (NumberFormatException ignored) {
            return null; // not a line we understand
        }
    }

    private static boolean contains(long[] a, long v) {
        for (long x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }

    /** The lines of {@code text}, without their line ends. */
    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        int start = 0;
        while (start < text.length()) {
            int nl = text.indexOf('\n', start);
            int end = nl < 0 ? text.length() : nl;
            out.add(text.substring(start, end));
            start = end + 1;
        }
        return out;
    }

    /** The fields of a /proc/locks line, split at runs of spaces and tabs. */
    static String[] fields(String line) {
        List<String> out = new ArrayList<>(9);
        int i = 0;
        int n = line.length();
        while (i < n) {
            while (i < n && Character.isWhitespace(line.charAt(i))) {
                i++;
            }
            int start = i;
            while (i < n && !Character.isWhitespace(line.charAt(i))) {
                i++;
            }
            if (i > start) {
                out.add(line.substring(start, i));
            }
        }
        return out.toArray(new String[0]);
    }
}
