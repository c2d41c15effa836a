package dev.interlock.file.internal;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The device numbers under which this host sees one NFS share, for {@code status} with
 * {@code ?network=allow}. An NFS client gives a second mount of the same share its own superblock,
 * so its own device number, when the mounts' options differ (or with {@code nosharecache});
 * {@code /proc/locks} names a lock by the device of the mount it was taken through, and the file
 * keeps its inode number (the server's file id) in every mount. So a holder that locked through
 * one mount is found through another by the inode number on any device whose mount, in
 * {@code /proc/self/mountinfo}, is NFS with the same source ({@code server:/export}) and root.
 * A share mounted under another server name (an IP address, an alias) is not recognised.
 *
 * <p>Internal API of Interlock (not for applications; may change in any release), beside
 * {@link ProcLocks}, which it serves.
 */
public final class NfsMountDevices {
    private NfsMountDevices() {}

    /** {@code major:minor} as one number, the form {@link ProcLocks} compares. */
    public static long device(long major, long minor) {
        return (major << 32) | (minor & 0xffffffffL);
    }

    /** The devices of every mount of the NFS share that device {@code major:minor} is; just that device if it is not NFS. */
    public static long[] sameShare(long major, long minor) {
        return sameShare(major, minor, read());
    }

    static long[] sameShare(long major, long minor, String mountinfo) {
        String id = major + ":" + minor;
        String[] mine = null;
        List<String[]> mounts = new ArrayList<>();
        for (String line : ProcLocks.lines(mountinfo)) {
            String[] m = mount(line);
            if (m == null) {
                continue;
            }
            mounts.add(m);
            if (m[0].equals(id)) {
                mine = m;
            }
        }
        if (mine == null || !mine[2].startsWith("nfs")) {
            return new long[] {device(major, minor)};
        }
        List<Long> out = new ArrayList<>();
        out.add(device(major, minor));
        for (String[] m : mounts) {
            if (!m[0].equals(id) && m[2].equals(mine[2]) && m[3].equals(mine[3]) && m[1].equals(mine[1])) {
                String[] mm = m[0].split(":");
                long d = device(Long.parseLong(mm[0]), Long.parseLong(mm[1]));
                if (!out.contains(d)) {
                    out.add(d);
                }
            }
        }
        long[] a = new long[out.size()];
        for (int i = 0; i < a.length; i++) {
            a[i] = out.get(i);
        }
        return a;
    }

    /** A mountinfo line as {major:minor, root, fstype, source}, or null if it is not one. */
    private static String[] mount(String line) {
        String[] f = ProcLocks.fields(line);
        int dash = -1;
        for (int i = 6; i < f.length; i++) {
            if (f[i].equals("-")) {
                dash = i;
                break;
            }
        }
        if (dash < 0 || f.length < dash + 3 || f[2].indexOf(':') < 0) {
            return null;
        }
        String[] mm = f[2].split(":");
        if (mm.length != 2 || !digits(mm[0]) || !digits(mm[1])) {
            return null;
        }
        return new String[] {f[2], f[3], f[dash + 1], f[dash + 2]};
    }

    private static boolean digits(String s) {
        if (s.isEmpty() || s.length() > 9) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    private static String read() {
        try (FileInputStream in = new FileInputStream("/proc/self/mountinfo")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }
}
