package dev.interlock.cli;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Platform;
import dev.interlock.spi.support.Durations;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code interlock verify} learns about the file system under a {@code flock:} or
 * {@code dir:} lock directory: its type from statfs(2), and from {@code /proc/self/mountinfo}
 * (where readable) the mount, its options and, for NFS, the protocol version; plus warnings about
 * settings known to break locking or visibility.
 *
 * <ul>
 *   <li>{@code flock:} on any network file system: flock(2) there excludes across hosts only if the
 *       server does it, and status, wake-ups and tokens are per host;</li>
 *   <li>{@code flock:} on NFS mounted {@code nolock} or {@code local_lock=all|flock}: flock(2) locks
 *       stay on this client, other hosts never see them;</li>
 *   <li>{@code dir:} on NFS with {@code lookupcache=all} (the default) and an attribute cache
 *       ({@code acdirmax}, set by {@code actimeo}) as long as the lease: another host's new lock file
 *       can stay invisible here for a whole lease;</li>
 *   <li>either on NFS mounted {@code nocto}: a file opened here may show content cached before
 *       another host's write, so files updated under a lock (verify's counter too) can be read
 *       stale.</li>
 * </ul>
 */
final class FileSystemProbe {
    private FileSystemProbe() {}

    /** One line of /proc/self/mountinfo. */
    record Mount(
            String device, String mountPoint, String fsType, String source, String mountOptions, String superOptions) {
        /** Mount and super options together, in order, the later winning ({@code vers=4.2}, {@code nolock}...). */
        Map<String, String> options() {
            Map<String, String> m = new LinkedHashMap<>();
            for (String list : new String[] {mountOptions, superOptions}) {
                for (String o : list.split(",")) {
                    if (o.isEmpty()) {
                        continue;
                    }
                    int eq = o.indexOf('=');
                    m.put(eq < 0 ? o : o.substring(0, eq), eq < 0 ? "" : o.substring(eq + 1));
                }
            }
            return m;
        }
    }

    /**
     * What was learned.
     *
     * @param path the directory
     * @param magic statfs(2) {@code f_type}, or -1 if unknown
     * @param type a name for the file system ({@code ext4}, {@code nfs4}, ...)
     * @param network the name of the network or cluster file system, or null for a local one
     * @param mount its mountinfo line, or null if unreadable
     * @param nfsVersion the NFS version ({@code 4.2}), or null
     */
    record Report(
            Path path, long magic, String type, String network, Mount mount, String nfsVersion, List<String> warnings) {
        /** One line for people: {@code nfs4 (statfs 0x6969) 4.2, server:/export mounted at /mnt/x (rw,...)}. */
        String describe() {
            StringBuilder sb = new StringBuilder(type);
            if (magic >= 0) {
                sb.append(String.format(" (statfs 0x%X)", magic));
            }
            if (nfsVersion != null) {
                sb.append(", NFS version ").append(nfsVersion);
            }
            if (mount != null) {
                sb.append(", ").append(mount.source()).append(" mounted at ").append(mount.mountPoint());
                if (network != null) {
                    sb.append(" (").append(mount.superOptions()).append(')');
                }
            }
            return sb.toString();
        }
    }

    /** statfs(2) {@code f_type} values: linux/magic.h, and the file systems' own sources. */
    private static final Map<Long, String> LOCAL = Map.ofEntries(
            Map.entry(0xEF53L, "ext2/ext3/ext4"),
            Map.entry(0x58465342L, "xfs"),
            Map.entry(0x9123683EL, "btrfs"),
            Map.entry(0x01021994L, "tmpfs"),
            Map.entry(0x794C7630L, "overlayfs"),
            Map.entry(0x2FC12FC1L, "zfs"),
            Map.entry(0xF2F52010L, "f2fs"),
            Map.entry(0x4D44L, "vfat"),
            Map.entry(0x2011BAB0L, "exfat"),
            Map.entry(0x5346544EL, "ntfs"),
            Map.entry(0x3153464AL, "jfs"),
            Map.entry(0x52654973L, "reiserfs"),
            Map.entry(0x858458F6L, "ramfs"),
            Map.entry(0xCA451A4EL, "bcachefs"));

    private static final Map<Long, String> NETWORK = Map.ofEntries(
            Map.entry(0x6969L, "NFS"),
            Map.entry(0x517BL, "SMB"),
            Map.entry(0xFF534D42L, "CIFS"),
            Map.entry(0xFE534D42L, "SMB2/SMB3"),
            Map.entry(0x00C36400L, "Ceph"),
            Map.entry(0x65735546L, "FUSE (sshfs, GlusterFS, s3fs, virtiofs or another FUSE server)"),
            Map.entry(0x5346414FL, "AFS"),
            Map.entry(0x6B414653L, "kAFS"),
            Map.entry(0x01021997L, "9P"),
            Map.entry(0x01161970L, "GFS2"),
            Map.entry(0x7461636FL, "OCFS2"),
            Map.entry(0x0BD00BD0L, "Lustre"),
            Map.entry(0x47504653L, "GPFS"),
            Map.entry(0x73757245L, "Coda"),
            Map.entry(0x19830326L, "BeeGFS"),
            Map.entry(0xAAD7AAEAL, "PanFS"),
            Map.entry(0xBACBACBCL, "VMware shared folder"),
            Map.entry(0x786F4256L, "VirtualBox shared folder"));

    /** The directory of a {@code flock:} or {@code dir:} URI (as those backends read it), or empty for other schemes. */
    static Optional<Path> directoryOf(String uri) {
        int colon = uri.indexOf(':');
        if (colon < 0) {
            return Optional.empty();
        }
        String scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
        if (!scheme.equals("flock") && !scheme.equals("dir")) {
            return Optional.empty();
        }
        String loc = uri.substring(colon + 1);
        int q = loc.indexOf('?');
        if (q >= 0) {
            loc = loc.substring(0, q);
        }
        if (loc.startsWith("//")) {
            loc = loc.substring(2);
        }
        if (loc.isEmpty()) {
            return Optional.empty();
        }
        try {
            if (scheme.equals("dir")) {
                loc = URLDecoder.decode(loc.replace("+", "%2B"), StandardCharsets.UTF_8);
            }
            return Optional.of(Path.of(loc).toAbsolutePath().normalize());
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Probes {@code dir} for the {@code scheme} backend using leases of {@code lease}. */
    static Report probe(String scheme, Path dir, Duration lease) {
        long magic = statfsType(dir);
        Mount mount = null;
        try {
            Path real = dir.toRealPath();
            long dev = ((Number) Files.getAttribute(real, "unix:dev")).longValue();
            List<String> lines = Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8);
            mount = mountOf(real, dev, lines).orElse(null);
        } catch (IOException | RuntimeException e) {
            // not readable: statfs alone
        }
        return analyze(scheme, dir, magic, mount, lease);
    }

    /** The report for what was found (separate from the probing so tests can feed it any mount). */
    static Report analyze(String scheme, Path dir, long magic, Mount mount, Duration lease) {
        String network = magic >= 0 ? NETWORK.get(magic & 0xffffffffL) : null;
        if (network == null && magic < 0 && mount != null) {
            network = networkByName(mount.fsType());
        }
        String type = mount != null
                ? mount.fsType()
                : magic >= 0
                        ? (network != null ? network : LOCAL.getOrDefault(magic & 0xffffffffL, "unknown"))
                        : "unknown";
        boolean nfs = (magic & 0xffffffffL) == 0x6969L
                || (mount != null && mount.fsType().startsWith("nfs"));
        Map<String, String> o = mount != null ? mount.options() : Map.of();
        String vers = nfs
                ? o.getOrDefault(
                        "vers",
                        o.getOrDefault(
                                "nfsvers", mount != null && mount.fsType().equals("nfs4") ? "4" : null))
                : null;
        List<String> warnings = new ArrayList<>();
        if (scheme.equals("flock") && network != null) {
            warnings.add("flock: on " + network
                    + ", a network file system: flock(2) there excludes across hosts only if the server"
                    + " supports it, and status, waiter wake-ups and fencing tokens are per host; use dir:" + dir
                    + " to share locks between hosts");
        }
        if (scheme.equals("flock") && nfs) {
            String local = o.get("local_lock");
            if (o.containsKey("nolock") || "all".equals(local) || "flock".equals(local)) {
                String how = o.containsKey("nolock") ? "nolock" : "local_lock=" + local;
                warnings.add("NFS mounted with " + how
                        + ": flock(2) locks stay on this client and other hosts never see them, so"
                        + " flock: does not exclude across hosts here; remount with local_lock=none (and without nolock), or use dir:"
                        + dir);
            }
        }
        if (scheme.equals("dir") && nfs) {
            String lookup = o.getOrDefault("lookupcache", "all");
            long acdirmax = seconds(o.get("acdirmax"), o.containsKey("noac") ? 0 : 60);
            if ((lookup.equals("all") || lookup.isEmpty())
                    && acdirmax > 0
                    && Duration.ofSeconds(acdirmax).compareTo(lease) >= 0) {
                warnings.add("NFS with lookupcache=all (the default) and acdirmax=" + acdirmax
                        + "s: another host's new lock file"
                        + " can stay invisible here for up to " + acdirmax + "s, as long as the lease ("
                        + Durations.format(lease)
                        + "); mount with lookupcache=positive or actimeo=3, or use a lease longer than " + acdirmax
                        + "s (--lease)");
            }
        }
        if (nfs && o.containsKey("nocto")) {
            warnings.add(
                    "NFS mounted with nocto: a file opened here may show content cached before another host's write, so"
                            + " files updated under a lock (verify's counter too) can be read stale; remount without nocto");
        }
        return new Report(dir, magic, type, network, mount, vers, warnings);
    }

    private static long seconds(String value, long otherwise) {
        try {
            return value == null ? otherwise : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    private static String networkByName(String fsType) {
        String t = fsType.toLowerCase(Locale.ROOT);
        if (t.startsWith("nfs")) {
            return "NFS";
        }
        if (t.startsWith("fuse")) {
            return "FUSE (" + fsType + ")";
        }
        for (String n : new String[] {
            "cifs",
            "smb3",
            "smbfs",
            "ceph",
            "afs",
            "9p",
            "gfs2",
            "ocfs2",
            "lustre",
            "gpfs",
            "beegfs",
            "glusterfs",
            "virtiofs"
        }) {
            if (t.equals(n)) {
                return fsType;
            }
        }
        return null;
    }

    /**
     * The mount holding {@code real} (a real path on device {@code dev}): the lines of that device
     * ({@code major:minor}), the one with the longest mount point that contains the path (bind
     * mounts share a device), else the first of them.
     */
    static Optional<Mount> mountOf(Path real, long dev, List<String> mountinfo) {
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        String device = major + ":" + minor;
        Mount best = null;
        for (String line : mountinfo) {
            Optional<Mount> m = parse(line);
            if (m.isEmpty() || !m.get().device().equals(device)) {
                continue;
            }
            Path mp = Path.of(m.get().mountPoint());
            if (best == null
                    || (real.startsWith(mp)
                            && (!real.startsWith(Path.of(best.mountPoint()))
                                    || mp.getNameCount()
                                            > Path.of(best.mountPoint()).getNameCount()))) {
                best = m.get();
            }
        }
        return Optional.ofNullable(best);
    }

    /** Parses {@code ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPEROPTIONS}. */
    static Optional<Mount> parse(String line) {
        String[] f = line.split(" ");
        int dash = -1;
        for (int i = 6; i < f.length; i++) {
            if (f[i].equals("-")) {
                dash = i;
                break;
            }
        }
        if (f.length < 6 || dash < 0 || dash + 2 >= f.length) {
            return Optional.empty();
        }
        return Optional.of(new Mount(
                f[2],
                unescape(f[4]),
                unescape(f[dash + 1]),
                unescape(f[dash + 2]),
                f[5],
                dash + 3 < f.length ? f[dash + 3] : ""));
    }

    /** mountinfo writes space, tab, newline and backslash as {@code \ooo}. */
    private static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\'
                    && i + 3 < s.length()
                    && s.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7')) {
                sb.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    /** statfs(2) {@code f_type} of {@code dir} (the first field of struct statfs, a long on 64-bit Linux), or -1. */
    private static long statfsType(Path dir) {
        if (!Platform.isLinux() || !Platform.is64Bit()) {
            return -1;
        }
        try {
            byte[] path = (dir.toString() + "\0").getBytes(StandardCharsets.UTF_8);
            Memory buf = new Memory(256); // struct statfs is 120 bytes on x86-64 and aarch64
            int rc = Function.getFunction(Platform.C_LIBRARY_NAME, "statfs").invokeInt(new Object[] {path, buf});
            return rc == 0 ? buf.getLong(0) & 0xffffffffL : -1;
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            return -1;
        }
    }

    /** True if standard error is a terminal (isatty(2)): the live progress line goes there only then. */
    static boolean stderrIsTerminal() {
        try {
            return Function.getFunction(Platform.C_LIBRARY_NAME, "isatty").invokeInt(new Object[] {2}) == 1;
        } catch (RuntimeException | UnsatisfiedLinkError e) {
            return false;
        }
    }
}
