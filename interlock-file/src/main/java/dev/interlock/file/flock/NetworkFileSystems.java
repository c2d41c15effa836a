package dev.interlock.file.flock;

import java.util.Map;
import java.util.Optional;

/**
 * File systems whose files may be shared by several hosts, by the magic number statfs(2) reports
 * in {@code f_type} (linux/magic.h and the file systems' own sources; the same set coreutils'
 * {@code stat -f} calls "remote", plus the cluster file systems).
 *
 * <p>Why {@code flock:} refuses them by default: a kernel {@code flock(2)} lock on such a file
 * system is, at best, forwarded to a server (NFS emulates it with a whole-file POSIX lock), while
 * everything else {@code flock:} builds on it is per host: {@code /proc/locks} lists only this
 * client's locks (so {@code status} says "free" while another client holds the lock), inotify
 * sees only this client's closes (waiters on other clients are woken by their poll only), and
 * the fencing token read from the lock file may be stale or fall back to this host's clock. FUSE
 * is included because it is how sshfs, GlusterFS, s3fs and virtiofs mount shared trees; the
 * locking of a FUSE file system is whatever its server does.
 */
final class NetworkFileSystems {
    private NetworkFileSystems() {}

    private static final Map<Long, String> NAMES = Map.ofEntries(
            Map.entry(0x6969L, "NFS"),
            Map.entry(0x517BL, "SMB"),
            Map.entry(0xFF534D42L, "CIFS"),
            Map.entry(0xFE534D42L, "SMB2/SMB3"),
            Map.entry(0x00C36400L, "Ceph"),
            Map.entry(0x65735546L, "FUSE (sshfs, GlusterFS, s3fs, virtiofs or another FUSE server)"),
            Map.entry(0x5346414FL, "AFS"),
            Map.entry(0x6B414653L, "kAFS"),
            Map.entry(0x01021997L, "9P (v9fs: a virtual machine's or WSL's shared folder)"),
            Map.entry(0x01161970L, "GFS2"),
            Map.entry(0x7461636FL, "OCFS2"),
            Map.entry(0x0BD00BD0L, "Lustre"),
            Map.entry(0x47504653L, "GPFS (IBM Storage Scale)"),
            Map.entry(0x73757245L, "Coda"),
            Map.entry(0x564CL, "NCP (NetWare)"),
            Map.entry(0x19830326L, "BeeGFS"),
            Map.entry(0xAAD7AAEAL, "PanFS"),
            Map.entry(0xBEEFDEADL, "StorNext"),
            Map.entry(0x013111A8L, "IBRIX"),
            Map.entry(0x61636673L, "Oracle ACFS"),
            Map.entry(0xBACBACBCL, "VMware shared folder (vmhgfs)"),
            Map.entry(0x786F4256L, "VirtualBox shared folder (vboxsf)"),
            Map.entry(0x7C7C6673L, "Parallels shared folder (prl_fs)"));

    /** The name of the network or cluster file system with this {@code f_type}, or empty for a local one. */
    static Optional<String> name(long fileSystemType) {
        return Optional.ofNullable(NAMES.get(fileSystemType & 0xffffffffL));
    }
}
