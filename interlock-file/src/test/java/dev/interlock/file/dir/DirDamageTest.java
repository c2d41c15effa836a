package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input and faults: foreign, damaged and planted files, symlinks, a deleted lock directory, a
 * read-only and a full file system. Each is reported clearly and never causes a false grant.
 */
class DirDamageTest {
    @TempDir
    Path tmp;

    private Path mounted;

    @AfterEach
    void unmount() throws Exception {
        if (mounted != null) {
            run("umount", "-l", mounted.toString());
        }
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0)
                .as("%s: %s (these tests need root)", String.join(" ", cmd), out)
                .isTrue();
    }

    private Path root() throws Exception {
        return Files.createDirectories(tmp.resolve("locks"));
    }

    private static List<String> entries(Path d) throws Exception {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static String gate(Path lockDir) throws Exception {
        return entries(lockDir).stream()
                .filter(n -> n.startsWith("F.") || n.startsWith("X."))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void foreignFilesAndSymlinks_areIgnoredAndNeverFollowedOut() throws Exception {
        Path root = root();
        Path outside = Files.createDirectories(tmp.resolve("outside"));
        Path secret = Files.writeString(outside.resolve("secret"), "keep me");
        Files.createFile(outside.resolve("F.0.0.abc")); // a gate-looking file out of reach
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire("job").orElseThrow().close();
            Path job = root.resolve("job");
            Files.createFile(job.resolve("junk"));
            Files.createFile(job.resolve("X.garbage"));
            Files.createFile(job.resolve("R.5.truncated"));
            Files.createSymbolicLink(job.resolve("F.999.999.abc"), secret); // a symlink posing as a second gate
            Files.createSymbolicLink(job.resolve("R.7.30000.1.1.1.1.0.abc.host"), secret);
            Files.createDirectory(job.resolve("B.1.0.30000.1.1.1.1.0.abc.host"));
            Files.writeString(root.resolve("stray-file"), "not a lock directory");
            Files.createSymbolicLink(root.resolve("evil"), outside); // a plain lock name that leads out
            Files.createSymbolicLink(root.resolve("%a%2Fb"), outside);

            try (Lease ex = locks.tryAcquire("job").orElseThrow()) {
                assertThat(locks.status("job").holders()).hasSize(1);
            }
            try (Lease sh = locks.tryAcquire("job", Mode.SHARED).orElseThrow()) {
                assertThat(locks.status("job").holders()).hasSize(1);
            }
            assertThatThrownBy(() -> locks.tryAcquire("evil"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("'evil'")
                    .hasMessageContaining("symbolic link");
            assertThatThrownBy(() -> locks.tryAcquire("a/b"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("symbolic link");
            assertThatThrownBy(() -> locks.tryAcquire("stray-file"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("not a lock directory");
            assertThat(locks.list()).extracting(LockInfo::name).containsExactly("job");
            assertThat(Files.readString(secret)).isEqualTo("keep me");
            assertThat(entries(outside)).containsExactly("F.0.0.abc", "secret");
            assertThat(Files.isSymbolicLink(job.resolve("F.999.999.abc"))).isTrue();
        }
    }

    /**
     * A directory of someone else's under the root (a user's home under {@code dir:/home}) is not
     * a damaged lock directory: nothing is granted, and the message never advises removing it.
     */
    @Test
    void foreignDirectoryUnderTheRoot_isNotCalledDamaged_norAdvisedForRemoval() throws Exception {
        Path root = root();
        Path home = Files.createDirectory(root.resolve("alice"));
        Files.writeString(home.resolve("thesis.tex"), "years of work");
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            assertThatThrownBy(() -> locks.tryAcquire("alice"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("not a lock directory")
                    .hasMessageContaining("left alone")
                    .satisfies(e ->
                            assertThat(e.getMessage()).doesNotContain("remove").doesNotContain("damaged"));
        }
        assertThat(entries(home)).containsExactly("thesis.tex");
    }

    @Test
    void plantedSecondGate_grantsNothingAndSaysSo() throws Exception {
        Path root = root();
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire("job").orElseThrow().close();
            Path planted = Files.createFile(root.resolve("job").resolve("F.100.0.abc"));
            for (Mode m : Mode.values()) {
                assertThatThrownBy(() -> locks.tryAcquire("job", m))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("'job'")
                        .hasMessageContaining("2 gate files")
                        .hasMessageContaining("tampered")
                        .hasMessageContaining("Nothing was granted");
            }
            Files.delete(planted);
            locks.tryAcquire("job").orElseThrow().close();
            Files.delete(root.resolve("job").resolve(gate(root.resolve("job"))));
            assertThatThrownBy(() -> locks.tryAcquire("job"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("no gate file");
        }
    }

    @Test
    void damagedNameRecordOfAHashedName_isRefused() throws Exception {
        Path root = root();
        String longName = "/".repeat(100);
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire(longName).orElseThrow().close();
        }
        Path record = root.resolve(DirNames.encode(longName)).resolve("name");
        String good = Files.readString(record);
        Files.writeString(record, good.substring(0, good.length() / 2));
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            assertThatThrownBy(() -> locks.tryAcquire(longName))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("name record");
            assertThat(locks.list()).isEmpty();
        }
        Files.writeString(record, good.replace("%2F%2F%2F\n", "%2F%2Fx\n"));
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            assertThatThrownBy(() -> locks.tryAcquire(longName))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("names another lock");
        }
        Files.writeString(record, good);
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire(longName).orElseThrow().close();
            assertThat(locks.list()).extracting(LockInfo::name).containsExactly(longName);
        }
    }

    @Test
    void foreignOrTruncatedFormatMarker_isRefusedWithTheFix() throws Exception {
        Path root = root();
        Files.writeString(root.resolve(".interlock-dir"), "interlock-dir 2\n");
        assertThatThrownBy(() -> Interlock.open("dir:" + root))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("interlock-dir 2")
                .hasMessageContaining("matching Interlock version");
        Files.writeString(root.resolve(".interlock-dir"), "interl");
        assertThatThrownBy(() -> Interlock.open("dir:" + root))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("not an Interlock format marker");
    }

    @Test
    void lockDirectoryDeletedUnderHolders_isReportedAsLost_andTheNameWorksAgain() throws Exception {
        Path root = root();
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            Lease ex = locks.tryAcquire("job").orElseThrow();
            Lease sh = locks.tryAcquire("shared", Mode.SHARED).orElseThrow();
            run(
                    "rm",
                    "-rf",
                    root.resolve("job").toString(),
                    root.resolve("shared").toString());
            assertThatThrownBy(ex::renew).isInstanceOf(LockLostException.class).hasMessageContaining("'job'");
            assertThatThrownBy(sh::renew).isInstanceOf(LockLostException.class).hasMessageContaining("'shared'");
            assertThat(ex.isValid()).isFalse();
            ex.close();
            sh.close();
            try (Lease again = locks.tryAcquire("job").orElseThrow()) {
                assertThat(again.isValid()).isTrue();
            }
        }
    }

    @Test
    void readOnlyFileSystem_givesAClearErrorAndLeavesNothingBehind() throws Exception {
        Path root = root();
        run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", root.toString());
        mounted = root;
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire("job").orElseThrow().close();
            run("mount", "-o", "remount,ro", root.toString());
            for (Mode m : Mode.values()) {
                assertThatThrownBy(() -> locks.tryAcquire("job", m))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("'job'")
                        .hasMessageContaining("read-only file system");
            }
            assertThatThrownBy(() -> locks.tryAcquire("new-name"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("read-only");
            assertThat(locks.status("job").isFree()).isTrue();
            run("mount", "-o", "remount,rw", root.toString());
            locks.tryAcquire("job").orElseThrow().close();
            locks.tryAcquire("job", Mode.SHARED).orElseThrow().close();
        }
    }

    @Test
    void renewalKeepsFailing_holderIsToldBeforeTheLeaseRunsOut() throws Exception {
        Path root = root();
        run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", root.toString());
        mounted = root;
        Duration lease = Duration.ofSeconds(3);
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            java.util.concurrent.atomic.AtomicLong lostAt = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicReference<LockLostException> cause =
                    new java.util.concurrent.atomic.AtomicReference<>();
            long start = System.nanoTime();
            Lease held = locks.lock("job")
                    .lease(lease)
                    .onLost(e -> {
                        lostAt.set(System.nanoTime());
                        cause.set(e);
                    })
                    .acquire(Duration.ZERO);
            run("mount", "-o", "remount,ro", root.toString());
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> lostAt.get() != 0);
            assertThat(lostAt.get() - start).as("told before the lease ran out").isLessThan(lease.toNanos());
            assertThat(held.isValid()).isFalse();
            assertThat(cause.get()).hasMessageContaining("'job'").hasMessageContaining("renewal kept failing");
            assertThat(cause.get().getCause()).hasMessageContaining("read-only file system");
            held.close();
        }
    }

    @Test
    void fullFileSystem_failsReadersClearly_writersStillWork_noHalfStateBlocks() throws Exception {
        Path root = root();
        run("mount", "-t", "tmpfs", "-o", "size=1m,nr_inodes=12", "tmpfs", root.toString());
        mounted = root;
        try (LockSpace locks = Interlock.open("dir:" + root)) {
            locks.tryAcquire("job").orElseThrow().close();
            for (int i = 0; ; i++) {
                try {
                    Files.createFile(root.resolve(".filler-" + i));
                } catch (java.io.IOException e) {
                    break; // out of inodes
                }
            }
            assertThatThrownBy(() -> locks.tryAcquire("job", Mode.SHARED))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("'job'")
                    .hasMessageContaining("no space left");
            try (Lease ex = locks.tryAcquire("job").orElseThrow()) {
                assertThat(ex.isValid())
                        .as("a writer only renames: no new inode needed")
                        .isTrue();
            }
            assertThat(locks.status("job").isFree()).isTrue();
        }
    }
}
