package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Ticker;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.spi.BackendConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntToLongFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code flock:} refuses network file systems unless the URI allows them. There is no NFS server here: the magic is injected. */
class FlockNetworkFileSystemTest {
    private static final long NFS = 0x6969;
    private static final long SMB2 = 0xFE534D42L;
    private static final long TMPFS = 0x01021994;

    @TempDir
    Path tmp;

    private static FlockBackend open(String uri, IntToLongFunction fileSystemType) {
        int colon = uri.indexOf(':');
        return FlockBackend.open(
                new BackendConfig(
                        uri,
                        "flock",
                        uri.substring(colon + 1),
                        Ticker.system(),
                        Clock.systemUTC(),
                        Duration.ofSeconds(30)),
                fileSystemType);
    }

    /** What coreutils stat(1) says the type of {@code p}'s file system is. */
    private static long statType(Path p) throws Exception {
        Process proc = new ProcessBuilder("stat", "-f", "-c", "%t", p.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(proc.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertThat(proc.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(proc.exitValue()).as(out).isZero();
        return Long.parseLong(out, 16);
    }

    private static long ourType(Path p) {
        int fd = LibcFiles.openat(
                LibcFiles.AT_FDCWD,
                LibcFiles.path(p),
                LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC,
                0);
        assertThat(fd).as("open %s: %s", p, Errno.describe(Errno.last())).isNotNegative();
        try {
            return LibcFiles.fileSystemType(fd);
        } finally {
            LibcFiles.close(fd);
        }
    }

    @Test
    void fileSystemType_isReadCorrectly_onThisMachinesFileSystems() throws Exception {
        for (Path p : new Path[] {tmp, Path.of("/tmp"), Path.of("/"), Path.of("/dev/shm"), Path.of("/proc")}) {
            if (Files.isDirectory(p)) {
                assertThat(ourType(p)).as("f_type of %s", p).isEqualTo(statType(p));
                assertThat(NetworkFileSystems.name(ourType(p)))
                        .as("%s is local", p)
                        .isEmpty();
            }
        }
        assertThat(ourType(Path.of("/proc"))).isEqualTo(0x9fa0);
        if ("tmpfs".equals(Files.getFileStore(Path.of("/dev/shm")).type())) {
            assertThat(ourType(Path.of("/dev/shm"))).isEqualTo(TMPFS);
        }
        if ("ext4".equals(Files.getFileStore(tmp).type())) {
            assertThat(ourType(tmp)).isEqualTo(0xEF53);
        }
    }

    @Test
    void networkFileSystem_isRefusedByDefault_namingItAndPointingToDir() throws IOException {
        Path d = Files.createDirectory(tmp.resolve("d"));
        assertThatThrownBy(() -> open("flock:" + d, fd -> NFS))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(d + " is on NFS (file system type 0x6969), a network file system")
                .hasMessageContaining("status says 'free' while another host holds a lock")
                .hasMessageContaining("use dir:" + d)
                .hasMessageContaining("flock:" + d + "?network=allow");
        assertThatThrownBy(() -> open("flock:" + d, fd -> SMB2))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("is on SMB2/SMB3 (file system type 0xFE534D42)");
    }

    @Test
    void missingDirectoryOnANetworkFileSystem_isRefusedAtOpen_andNotCreated() {
        Path d = tmp.resolve("not-yet");
        assertThatThrownBy(() -> open("flock:" + d, fd -> NFS))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining(tmp + " is on NFS");
        assertThat(d).doesNotExist();
    }

    @Test
    void networkAllow_opensAndLocks() throws IOException {
        Path d = Files.createDirectory(tmp.resolve("d"));
        try (LockSpace locks = Interlock.builder(open("flock:" + d + "?network=allow", fd -> NFS))
                .open()) {
            locks.tryAcquire("x", Mode.SHARED).orElseThrow().close();
            locks.tryAcquire("x").orElseThrow().close();
            assertThat(locks.status("x").isFree()).isTrue();
        }
    }

    @Test
    void networkAllow_isAcceptedThroughTheUri_onALocalDirectory() throws IOException {
        Path d = Files.createDirectory(tmp.resolve("d"));
        try (LockSpace locks = Interlock.open("flock:" + d + "?network=allow")) {
            locks.tryAcquire("x").orElseThrow().close();
        }
        try (LockSpace locks = Interlock.open("flock:" + d + "?network=refuse")) {
            locks.tryAcquire("x").orElseThrow().close();
        }
    }

    @Test
    void badOptions_areClearUsageErrors() {
        assertThatThrownBy(() -> Interlock.open("flock:" + tmp + "?network=yes"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not 'yes'")
                .hasMessageContaining("allow or refuse");
        assertThatThrownBy(() -> Interlock.open("flock:" + tmp + "?timeout=5"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown option 'timeout'")
                .hasMessageContaining("network=...");
        assertThatThrownBy(() -> Interlock.open("flock:" + tmp + "#x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'#'");
    }
}
