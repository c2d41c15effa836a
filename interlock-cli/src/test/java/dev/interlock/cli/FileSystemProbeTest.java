package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What verify says about a lock directory's file system, from mountinfo lines as Linux writes them. */
class FileSystemProbeTest {
    static final String NFS4 =
            "1207 29 0:53 / /mnt/nfs rw,relatime shared:626 - nfs4 files:/export rw,vers=4.2,rsize=1048576,"
                    + "wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.2,local_lock=none,addr=10.0.0.1";
    static final String NFS3_NOLOCK =
            "1208 29 0:54 / /mnt/nfs3 rw,relatime shared:627 - nfs files:/export rw,vers=3,rsize=1048576,"
                    + "wsize=1048576,namlen=255,acregmin=3,acregmax=60,acdirmin=30,acdirmax=60,hard,nolock,proto=tcp,timeo=600,retrans=2,"
                    + "sec=sys,mountaddr=10.0.0.1,mountvers=3,mountport=20048,mountproto=udp,local_lock=all,addr=10.0.0.1";
    static final long NFS_MAGIC = 0x6969;
    static final Duration LEASE = Duration.ofSeconds(30);

    static FileSystemProbe.Mount mount(String line) {
        return FileSystemProbe.parse(line).orElseThrow();
    }

    static FileSystemProbe.Report report(String scheme, String line) {
        return FileSystemProbe.analyze(scheme, Path.of("/mnt/x/locks"), NFS_MAGIC, mount(line), LEASE);
    }

    @Test
    void parse_readsTheFieldsAfterTheOptionalOnes_andUnescapesSpaces() {
        FileSystemProbe.Mount m = mount(
                "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue");
        assertThat(m.device()).isEqualTo("98:0");
        assertThat(m.mountPoint()).isEqualTo("/mnt/my disk");
        assertThat(m.fsType()).isEqualTo("ext3");
        assertThat(m.source()).isEqualTo("/dev/root");
        assertThat(m.options()).containsEntry("noatime", "").containsEntry("errors", "continue");
        assertThat(FileSystemProbe.parse("not a mountinfo line")).isEmpty();
    }

    @Test
    void mountOf_matchesTheDevice_andPrefersTheDeepestBindMountHoldingThePath() {
        List<String> lines = List.of(
                "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
                NFS4,
                "1300 29 0:53 /sub /srv/bound rw,relatime - nfs4 files:/export/sub rw,vers=4.2");
        long dev53 = 53; // makedev(0, 53)
        assertThat(FileSystemProbe.mountOf(Path.of("/srv/bound/locks"), dev53, lines))
                .hasValueSatisfying(m -> {
                    assertThat(m.mountPoint()).isEqualTo("/srv/bound");
                });
        assertThat(FileSystemProbe.mountOf(Path.of("/mnt/nfs/locks"), dev53, lines))
                .hasValueSatisfying(m -> {
                    assertThat(m.mountPoint()).isEqualTo("/mnt/nfs");
                });
        assertThat(FileSystemProbe.mountOf(Path.of("/home/x"), 254L << 8, lines))
                .hasValueSatisfying(m -> {
                    assertThat(m.fsType()).isEqualTo("ext4");
                });
        assertThat(FileSystemProbe.mountOf(Path.of("/x"), 99, lines)).isEmpty();
    }

    @Test
    void nfs_versionAndServerAreReported() {
        FileSystemProbe.Report r = report("dir", NFS4);
        assertThat(r.nfsVersion()).isEqualTo("4.2");
        assertThat(r.network()).isEqualTo("NFS");
        assertThat(r.describe())
                .startsWith("nfs4 (statfs 0x6969), NFS version 4.2, files:/export mounted at /mnt/nfs (rw,vers=4.2,");
    }

    @Test
    void flock_onAnyNetworkFileSystem_isWarnedAbout() {
        assertThat(report("flock", NFS4).warnings())
                .singleElement()
                .asString()
                .startsWith("flock: on NFS, a network file system")
                .contains("use dir:/mnt/x/locks");
        FileSystemProbe.Report fuse = FileSystemProbe.analyze("flock", Path.of("/mnt/s"), 0x65735546L, null, LEASE);
        assertThat(fuse.warnings()).singleElement().asString().startsWith("flock: on FUSE");
    }

    @Test
    void flock_onNfsWithNolockOrLocalLocks_isWarnedThatOtherHostsNeverSeeTheLocks() {
        assertThat(report("flock", NFS3_NOLOCK).warnings())
                .anyMatch(w -> w.startsWith("NFS mounted with nolock: flock(2) locks stay on this client"));
        assertThat(report("flock", NFS4.replace("local_lock=none", "local_lock=flock"))
                        .warnings())
                .anyMatch(w -> w.startsWith("NFS mounted with local_lock=flock"));
        assertThat(report("flock", NFS4.replace("local_lock=none", "local_lock=all"))
                        .warnings())
                .anyMatch(w -> w.startsWith("NFS mounted with local_lock=all"));
        assertThat(report("flock", NFS4.replace("local_lock=none", "local_lock=posix"))
                        .warnings())
                .noneMatch(w -> w.contains("local_lock"));
        assertThat(report("dir", NFS3_NOLOCK).warnings())
                .as("dir: takes no kernel locks")
                .noneMatch(w -> w.contains("nolock"));
    }

    @Test
    void dir_onNfsWithTheDefaultLookupCache_isWarnedWhenTheAttributeCacheIsAsLongAsTheLease() {
        assertThat(report("dir", NFS4).warnings())
                .singleElement()
                .asString()
                .startsWith("NFS with lookupcache=all (the default) and acdirmax=60s")
                .contains("lookupcache=positive or actimeo=3");
        assertThat(report("dir", NFS4 + ",lookupcache=pos").warnings()).isEmpty();
        assertThat(report("dir", NFS4 + ",lookupcache=none").warnings()).isEmpty();
        assertThat(report("dir", NFS4 + ",acregmin=3,acregmax=3,acdirmin=3,acdirmax=3")
                        .warnings())
                .as("actimeo=3")
                .isEmpty();
        assertThat(FileSystemProbe.analyze("dir", Path.of("/mnt/x"), NFS_MAGIC, mount(NFS4), Duration.ofMinutes(2))
                        .warnings())
                .as("a lease longer than the attribute cache")
                .isEmpty();
    }

    @Test
    void nocto_isWarnedAbout_forBothBackends() {
        for (String scheme : List.of("flock", "dir")) {
            assertThat(report(scheme, NFS4 + ",nocto").warnings())
                    .anyMatch(w -> w.startsWith("NFS mounted with nocto"));
        }
    }

    @Test
    void aLocalFileSystem_hasNoWarnings_andIsNamedByStatfsAlone() {
        FileSystemProbe.Report r = FileSystemProbe.analyze("flock", Path.of("/var/lock/x"), 0xEF53, null, LEASE);
        assertThat(r.warnings()).isEmpty();
        assertThat(r.describe()).isEqualTo("ext2/ext3/ext4 (statfs 0xEF53)");
    }

    @Test
    void probe_readsThisMachine(@TempDir Path dir) {
        FileSystemProbe.Report r = FileSystemProbe.probe("flock", dir, LEASE);
        assertThat(r.magic()).as("statfs worked").isPositive();
        assertThat(r.mount()).as("mountinfo found the mount of %s", dir).isNotNull();
        assertThat(dir.toString()).startsWith(r.mount().mountPoint());
    }

    @Test
    void directoryOf_readsFlockAndDirUris_likeTheirBackends() {
        assertThat(FileSystemProbe.directoryOf("flock:/var/lock/app?network=allow"))
                .hasValue(Path.of("/var/lock/app"));
        assertThat(FileSystemProbe.directoryOf("dir:///mnt/a%20b/locks?poll=50ms"))
                .hasValue(Path.of("/mnt/a b/locks"));
        assertThat(FileSystemProbe.directoryOf("dir:/mnt/a+b")).hasValue(Path.of("/mnt/a+b"));
        assertThat(FileSystemProbe.directoryOf("flock:rel/dir"))
                .hasValue(Path.of("rel/dir").toAbsolutePath());
        assertThat(FileSystemProbe.directoryOf("redis://localhost:6379")).isEmpty();
        assertThat(FileSystemProbe.directoryOf("mem:x")).isEmpty();
    }
}
