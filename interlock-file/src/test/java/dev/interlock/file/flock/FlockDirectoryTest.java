package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.file.internal.KernelWait;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock directory and {@code .gates}: nothing in a lock space is followed out of it, nothing is
 * created by reading, and the held directory is the one the lease checks. The tests run as root
 * (as in CI), which is the user a planted link would hurt most.
 */
class FlockDirectoryTest {
    @TempDir
    Path tmp;

    private static void mode(Path p, int mode) throws Exception {
        Files.setAttribute(p, "unix:mode", mode);
    }

    private static int modeOf(Path p) throws Exception {
        return (Integer) Files.getAttribute(p, "unix:mode") & 07777;
    }

    /** A directory like /tmp or /run/lock: every user may write it, the sticky bit protects entries. */
    private Path stickyDirectory() throws Exception {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        mode(shared, 01777);
        return shared;
    }

    @Test
    void gatesPlantedAsSymlink_inStickyDirectory_isRefused_andNothingIsCreatedWhereItPoints() throws Exception {
        Path shared = stickyDirectory();
        Path rootOnly = Files.createDirectory(tmp.resolve("root-only"));
        mode(rootOnly, 0700);
        Files.createSymbolicLink(shared.resolve(".gates"), rootOnly);
        try (LockSpace locks = Interlock.open("flock:" + shared)) {
            assertThatThrownBy(() -> locks.tryAcquire("nologin", Mode.SHARED))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(shared.resolve(".gates") + " is a symbolic link")
                    .hasMessageContaining("rm " + shared.resolve(".gates"));
            assertThatThrownBy(() -> locks.tryAcquire("nologin"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("symbolic link");
        }
        try (var entries = Files.list(rootOnly)) {
            assertThat(entries).as("files created through the planted link").isEmpty();
        }
        assertThat(Files.isSymbolicLink(shared.resolve(".gates")))
                .as("the link is left for the user to inspect")
                .isTrue();
    }

    @Test
    void gatesThatIsAFile_isRefused() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("d"));
        Files.writeString(d.resolve(".gates"), "");
        try (LockSpace locks = Interlock.open("flock:" + d)) {
            assertThatThrownBy(() -> locks.tryAcquire("x", Mode.SHARED))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(".gates is not a directory");
        }
    }

    @Test
    void gatesOwnedByAnotherUser_inStickyDirectory_isRefused() throws Exception {
        Path shared = stickyDirectory();
        Path gates = Files.createDirectory(shared.resolve(".gates"));
        mode(gates, 0777);
        Files.setAttribute(gates, "unix:uid", 4242);
        try (LockSpace locks = Interlock.open("flock:" + shared)) {
            assertThatThrownBy(() -> locks.tryAcquire("x", Mode.SHARED))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(".gates belongs to uid 4242, not to you")
                    .hasMessageContaining("mkdir -m 1777 " + gates);
            assertThat(gates.resolve("x")).doesNotExist();
        }
    }

    @Test
    void gatesOwnedByAnotherUser_inGroupDirectory_isAccepted() throws Exception {
        Path group = Files.createDirectory(tmp.resolve("group"));
        mode(group, 02770);
        Path gates = Files.createDirectory(group.resolve(".gates"));
        mode(gates, 02770);
        Files.setAttribute(gates, "unix:uid", 4242); // another member of the group queued first
        try (LockSpace locks = Interlock.open("flock:" + group)) {
            locks.tryAcquire("x", Mode.SHARED).orElseThrow().close();
        }
        assertThat(gates.resolve("x")).isRegularFile();
    }

    @Test
    void gatesMadeInStickyDirectory_keepsTheStickyBit() throws Exception {
        Path shared = stickyDirectory();
        try (LockSpace locks = Interlock.open("flock:" + shared)) {
            locks.tryAcquire("x", Mode.SHARED).orElseThrow().close();
        }
        assertThat(Integer.toOctalString(modeOf(shared.resolve(".gates")))).isEqualTo("1777");
    }

    @Test
    void lockDirectoryGivenAsALink_isFollowed_asTheUserChose() throws Exception {
        Path real = Files.createDirectory(tmp.resolve("real"));
        Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
        try (LockSpace locks = Interlock.open("flock:" + link)) {
            try (Lease l = locks.tryAcquire("x", Mode.SHARED).orElseThrow()) {
                l.renew();
                assertThat(locks.status("x").holders()).hasSize(1);
            }
        }
        assertThat(real.resolve("x")).isRegularFile();
        assertThat(real.resolve(".gates/x")).isRegularFile();
    }

    @Test
    void statusListBreak_onMissingDirectory_createNothing_andSaySo() throws Exception {
        Path typo = tmp.resolve("lokcs");
        try (LockSpace locks = Interlock.open("flock:" + typo)) {
            String expected = "no lock space at " + typo + " (nothing was created)";
            assertThatThrownBy(() -> locks.status("x"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(expected);
            assertThatThrownBy(locks::list)
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining(expected);
            assertThatThrownBy(() -> locks.breakLock("x", "h:1:2:0123456789abcdef"))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("cannot break");
        }
        assertThat(typo).doesNotExist();
    }

    @Test
    void missingDirectory_isMadeAtTheFirstAcquisition_withItsGates() throws Exception {
        Path later = tmp.resolve("later");
        try (LockSpace locks = Interlock.open("flock:" + later)) {
            assertThat(later).doesNotExist();
            try (Lease l = locks.tryAcquire("x").orElseThrow()) {
                assertThat(later).isDirectory();
                assertThat(later.resolve(".gates")).isDirectory();
                assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(later)))
                        .isEqualTo("rwx------");
                assertThat(locks.status("x").holders()).hasSize(1);
                assertThat(locks.list()).hasSize(1);
            }
        }
    }

    @Test
    void lockDirectoryRenamedAwayAndReplaced_underHolder_leaseIsLost() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("d"));
        try (LockSpace locks = Interlock.open("flock:" + d)) {
            Lease l = locks.tryAcquire("x").orElseThrow();
            AtomicReference<LockLostException> told = new AtomicReference<>();
            l.onLost(told::set);
            Files.move(d, tmp.resolve("d.old"));
            Files.createDirectory(d);
            // The name in the directory we hold is still our inode, but others now lock d/x in the new directory.
            assertThatThrownBy(l::renew)
                    .isInstanceOf(LockLostException.class)
                    .hasMessageContaining("lock directory " + d + " was removed or replaced");
            assertThat(told.get()).isNotNull();
            l.close();
        }
    }

    @Test
    void waiter_watchesTheFilesItHoldsOpen() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("d"));
        KernelWait.enable(false); // the inotify path: a kernel wait watches nothing
        try (LockSpace locks = Interlock.open("flock:" + d);
                LockSpace other = Interlock.open("flock:" + d)) {
            FlockBackend b = (FlockBackend) Spaces.backend(other);
            Lease held = locks.tryAcquire("w").orElseThrow();
            AtomicReference<Lease> got = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    got.set(other.acquire("w", Timing.seconds(30)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            t.start();
            await().atMost(Timing.seconds(10)).until(() -> b.watchCount() == 1); // the lock file (it holds the gate)
            held.close();
            t.join(Timing.seconds(30).toMillis());
            assertThat(got.get()).isNotNull();
            got.get().close();
        } finally {
            KernelWait.enable(true);
        }
    }
}
