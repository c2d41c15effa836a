package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.HolderInfo;
import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What is particular to {@code flock:}: interop with util-linux flock(1), crashes, files, multi-process exclusion. */
class FlockBackendTest {
    @TempDir
    Path dir;

    LockSpace locks;

    @BeforeEach
    void open() {
        locks = Interlock.open("flock:" + dir);
    }

    @AfterEach
    void close() {
        locks.close();
    }

    /** Runs util-linux flock(1) with a non-blocking try, returns its exit status. */
    private static int flockTry(String... args) throws Exception {
        String[] cmd = new String[args.length + 2];
        cmd[0] = "flock";
        cmd[1] = "-n";
        System.arraycopy(args, 0, cmd, 2, args.length);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }

    /** Starts util-linux flock(1) holding the file until we close its stdin; returns once it holds. */
    private static Process flockHold(Path file, boolean shared) throws Exception {
        Process p = new ProcessBuilder(
                        "flock", shared ? "-s" : "-x", file.toString(), "sh", "-c", "echo held; cat >/dev/null")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        assertThat(r.readLine()).isEqualTo("held");
        return p;
    }

    private static Process childHolder(String uri, String name, Mode mode) throws IOException {
        Process p = ChildJvm.start(FlockHolder.class, uri, name, mode.name());
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = r.readLine();
        assertThat(line).as("child acquired").startsWith("HELD ");
        return p;
    }

    @Test
    void plainName_isTheFileThatFlock1Locks() throws Exception {
        try (Lease l = locks.tryAcquire("nightly").orElseThrow()) {
            assertThat(dir.resolve("nightly")).isRegularFile();
            assertThat(flockTry(dir.resolve("nightly").toString(), "true"))
                    .as("flock(1) -x while we hold EX")
                    .isEqualTo(1);
            assertThat(flockTry("-s", dir.resolve("nightly").toString(), "true"))
                    .as("flock(1) -s while we hold EX")
                    .isEqualTo(1);
        }
        assertThat(flockTry(dir.resolve("nightly").toString(), "true")).isZero();
        try (Lease l = locks.tryAcquire("nightly", Mode.SHARED).orElseThrow()) {
            assertThat(flockTry("-s", dir.resolve("nightly").toString(), "true"))
                    .as("flock(1) -s while we hold SH")
                    .isZero();
            assertThat(flockTry(dir.resolve("nightly").toString(), "true"))
                    .as("flock(1) -x while we hold SH")
                    .isEqualTo(1);
        }
    }

    @Test
    void flock1Holder_excludesUs_andShowsInStatus() throws Exception {
        Process p = flockHold(dir.resolve("cron"), false);
        try {
            assertThat(locks.tryAcquire("cron")).isEmpty();
            assertThat(locks.tryAcquire("cron", Mode.SHARED)).isEmpty();
            LockInfo info = locks.status("cron");
            assertThat(info.holders()).hasSize(1);
            HolderInfo h = info.holders().get(0);
            assertThat(h.ownerId()).isEmpty();
            assertThat(h.pid()).isPositive();
            assertThat(h.describe()).contains("not an Interlock holder");
        } finally {
            p.getOutputStream().close();
            p.waitFor(20, TimeUnit.SECONDS);
        }
        locks.tryAcquire("cron").orElseThrow().close();
    }

    @Test
    void flock1Holder_endingWakesOurWaiter() throws Exception {
        Process p = flockHold(dir.resolve("wake"), false);
        AtomicReference<Lease> got = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                got.set(locks.acquire("wake", Timing.seconds(30)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        p.getOutputStream().close();
        t.join(Timing.seconds(30).toMillis());
        assertThat(got.get()).isNotNull();
        got.get().close();
    }

    @Test
    void flock1Shared_coexistsWithOurShared() throws Exception {
        Process p = flockHold(dir.resolve("both"), true);
        try {
            locks.tryAcquire("both", Mode.SHARED).orElseThrow().close();
            assertThat(locks.tryAcquire("both")).isEmpty();
        } finally {
            p.getOutputStream().close();
            p.waitFor(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void killedHolder_frees_atOnce() throws Exception {
        String uri = "flock:" + dir;
        Process p = childHolder(uri, "crash", Mode.EXCLUSIVE);
        assertThat(locks.tryAcquire("crash")).isEmpty();
        LockInfo info = locks.status("crash");
        assertThat(info.holders()).singleElement().satisfies(h -> {
            assertThat(h.pid()).isEqualTo(p.pid());
            assertThat(h.ownerId()).isPresent();
        });
        p.destroyForcibly(); // SIGKILL
        assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();
        try (Lease l = locks.tryAcquire("crash").orElseThrow()) {
            assertThat(l.token()).isGreaterThan(info.holders().get(0).token().getAsLong());
        }
    }

    @Test
    void waiter_isWokenWhenHolderProcessIsKilled() throws Exception {
        Process p = childHolder("flock:" + dir, "crash2", Mode.EXCLUSIVE);
        AtomicReference<Lease> got = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                got.set(locks.acquire("crash2", Timing.seconds(30)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        p.destroyForcibly();
        t.join(Timing.seconds(30).toMillis());
        assertThat(got.get()).isNotNull();
        got.get().close();
    }

    @Test
    void processes_exclusive_neverOverlap_andLoseNoUpdate(@TempDir Path work) throws Exception {
        ExclusionChecker.Report r = MultiProcessChecker.run("flock:" + dir, "shared-counter", "ex", 4, 150, work);
        assertThat(r.exclusive()).isEqualTo(600);
    }

    @Test
    void processes_mixedModes_neverOverlap(@TempDir Path work) throws Exception {
        ExclusionChecker.Report r = MultiProcessChecker.run("flock:" + dir, "mixed/name", "mixed", 4, 150, work);
        assertThat(r.sections()).isEqualTo(600);
    }

    @Test
    void otherCodeOpeningAndClosingTheFile_doesNotDropTheLock() throws Exception {
        try (Lease l = locks.tryAcquire("keep").orElseThrow()) {
            Files.readAllBytes(dir.resolve("keep"));
            try (var ch =
                    java.nio.channels.FileChannel.open(dir.resolve("keep"), java.nio.file.StandardOpenOption.READ)) {
                ch.size();
            }
            assertThat(flockTry(dir.resolve("keep").toString(), "true")).isEqualTo(1);
        }
    }

    @Test
    void lockFile_isNeverRemoved() throws Exception {
        locks.tryAcquire("stays").orElseThrow().close();
        locks.tryAcquire("stays", Mode.SHARED).orElseThrow().close();
        assertThat(dir.resolve("stays")).exists();
    }

    @Test
    void lockFileRemovedUnderHolder_leaseIsLost() throws Exception {
        Lease l = locks.tryAcquire("removed").orElseThrow();
        AtomicReference<LockLostException> told = new AtomicReference<>();
        l.onLost(told::set);
        Files.delete(dir.resolve("removed"));
        assertThatThrownBy(l::renew)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("was removed while held");
        assertThat(told.get()).isNotNull();
        assertThat(l.isValid()).isFalse();
        l.close();
        locks.tryAcquire("removed").orElseThrow().close();
    }

    @Test
    void lockFileReplacedUnderHolder_leaseIsLost() throws Exception {
        Lease l = locks.tryAcquire("replaced").orElseThrow();
        Path tmp = dir.resolve("tmp");
        Files.writeString(tmp, "");
        Files.move(tmp, dir.resolve("replaced"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("replaced");
    }

    @Test
    void plantedSymlink_isNeverFollowed() throws Exception {
        Path victim = dir.getParent().resolve(dir.getFileName() + "-victim");
        Files.writeString(victim, "precious");
        Files.createSymbolicLink(dir.resolve("trap"), victim);
        try {
            assertThatThrownBy(() -> locks.tryAcquire("trap"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("symbolic link");
            assertThat(Files.readString(victim)).isEqualTo("precious");
        } finally {
            Files.delete(victim);
        }
    }

    @Test
    void foreignContent_isLeftUntouched_andTokensStillIncrease() throws Exception {
        Files.writeString(dir.resolve("pidfile"), "12345\n");
        long first;
        try (Lease l = locks.tryAcquire("pidfile").orElseThrow()) {
            first = l.token();
        }
        try (Lease l = locks.tryAcquire("pidfile").orElseThrow()) {
            assertThat(l.token()).isGreaterThan(first);
        }
        assertThat(Files.readString(dir.resolve("pidfile"))).isEqualTo("12345\n");
    }

    @Test
    void damagedOrTruncatedFile_isRepaired_andTokensStillIncrease() throws Exception {
        long before;
        try (Lease l = locks.tryAcquire("damaged").orElseThrow()) {
            before = l.token();
        }
        String content = Files.readString(dir.resolve("damaged"));
        Files.writeString(dir.resolve("damaged"), content.substring(0, 30)); // cut inside the header
        try (Lease l = locks.tryAcquire("damaged").orElseThrow()) {
            assertThat(l.token()).isGreaterThan(before);
        }
        assertThat(Files.readString(dir.resolve("damaged"))).startsWith("interlock-flock/1 token=");
        Files.write(dir.resolve("damaged"), new byte[] {(byte) 0xff, 0, 1, 2}); // binary junk: foreign
        locks.tryAcquire("damaged").orElseThrow().close();
    }

    @Test
    void missingDirectory_isCreatedPrivate() throws Exception {
        Path sub = dir.resolve("new-locks");
        try (LockSpace s = Interlock.open("flock:" + sub)) {
            s.tryAcquire("x").orElseThrow().close();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(sub)))
                .isEqualTo("rwx------");
    }

    @Test
    void missingParent_notADirectory_badUri_areClearErrors() throws Exception {
        assertThatThrownBy(() -> Interlock.open("flock:" + dir.resolve("no/such/dir")))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("does not exist")
                .hasMessageContaining("mkdir -p");
        Files.writeString(dir.resolve("file"), "");
        assertThatThrownBy(() -> Interlock.open("flock:" + dir.resolve("file")))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("is not a directory");
        assertThatThrownBy(() -> Interlock.open("flock:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names no directory");
        assertThatThrownBy(() -> Interlock.open("flock://host/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("names a host");
        assertThatThrownBy(() -> Interlock.open("nosuch:/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("flock");
        assertThatThrownBy(() -> Interlock.open("/just/a/path"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scheme");
    }

    @Test
    void lockDirectoryRemovedUnderUse_isAClearError() throws Exception {
        Path sub = dir.resolve("gone");
        try (LockSpace s = Interlock.open("flock:" + sub)) {
            s.tryAcquire("x").orElseThrow().close(); // the directory is made at the first acquisition
            Files.delete(sub.resolve("x"));
            Files.delete(sub.resolve(".gates"));
            Files.delete(sub);
            assertThatThrownBy(() -> s.tryAcquire("x"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("was removed");
        }
    }

    @Test
    void manyDistinctNames_leaveDescriptorsAndWatchesFlat() throws Exception {
        long before = openDescriptors();
        for (int i = 0; i < 5000; i++) {
            locks.tryAcquire("name-" + i).orElseThrow().close();
        }
        assertThat(openDescriptors()).isLessThanOrEqualTo(before + 2);
        assertThat(Spaces.openLeases(locks)).isZero();
    }

    @Test
    void waitersThatGaveUp_leaveNoWatches() throws Exception {
        try (Lease held = locks.tryAcquire("w").orElseThrow()) {
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> locks.acquire("w", Duration.ofMillis(50)))
                        .isInstanceOf(dev.interlock.LockTimeoutException.class);
            }
        }
        FlockBackend b = (FlockBackend) Spaces.backend(locks);
        await().atMost(Timing.seconds(5)).until(() -> b.watchCount() == 0);
    }

    private static long openDescriptors() throws IOException {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    @Test
    void list_showsPlainEncodedAndHashedNames() {
        String longName = "ü".repeat(300);
        locks.tryAcquire("plain").orElseThrow().close();
        locks.tryAcquire("a/b").orElseThrow().close();
        try (Lease l = locks.tryAcquire(longName).orElseThrow()) {
            List<LockInfo> all = locks.list();
            assertThat(all).extracting(LockInfo::name).containsExactly("a/b", "plain", longName);
            assertThat(all.get(2).holders()).hasSize(1);
        }
    }

    @Test
    void lockAndGateFilesNotWritableByTheUser_stillLock_withIncreasingTokens() throws Exception {
        locks.tryAcquire("ro", Mode.SHARED).orElseThrow().close();
        long before;
        try (Lease l = locks.tryAcquire("ro").orElseThrow()) {
            before = l.token();
        }
        Path lock = dir.resolve("ro");
        Files.setPosixFilePermissions(lock, PosixFilePermissions.fromString("r--r--r--"));
        Files.setPosixFilePermissions(dir.resolve(".gates/ro"), PosixFilePermissions.fromString("r--r--r--"));
        // The holder runs in a new user namespace: it keeps our uid but loses CAP_DAC_OVERRIDE, so
        // the 0444 files are read-only for it even when the tests run as root.
        ProcessBuilder pb = ChildJvm.builder(FlockHolder.class, List.of(), "flock:" + dir, "ro", "EXCLUSIVE");
        List<String> cmd = new java.util.ArrayList<>(List.of("unshare", "--user"));
        cmd.addAll(pb.command());
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            String line =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertThat(line).as("acquired the lock on read-only files").startsWith("HELD ");
            assertThat(Long.parseLong(line.substring(5))).isGreaterThan(before);
            assertThat(locks.tryAcquire("ro")).isEmpty();
        } finally {
            p.getOutputStream().close();
            p.waitFor(20, TimeUnit.SECONDS);
            p.destroyForcibly();
        }
        try (Lease l = locks.tryAcquire("ro").orElseThrow()) {
            assertThat(l.token()).isGreaterThan(before);
        }
    }

    @Test
    void gateDirectory_getsTheLockDirectorysPermissions() throws Exception {
        Path shared = dir.resolve("group-dir");
        Files.createDirectory(shared);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwx---"));
        try (LockSpace s = Interlock.open("flock:" + shared)) {
            s.tryAcquire("x", Mode.SHARED).orElseThrow().close();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(shared.resolve(".gates"))))
                .isEqualTo("rwxrwx---");
    }

    @Test
    void descriptors_areCloseOnExec() throws Exception {
        try (Lease l = locks.tryAcquire("cloexec").orElseThrow()) {
            int fd = l.inheritableDescriptor().orElseThrow();
            String flags = Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd)).stream()
                    .filter(x -> x.startsWith("flags:"))
                    .findFirst()
                    .orElseThrow()
                    .substring(6)
                    .trim();
            assertThat(Long.parseLong(flags, 8) & 02000000)
                    .as("O_CLOEXEC in %s", flags)
                    .isNotZero();
        }
    }

    @Test
    void lockDirectoryNotWritable_isAClearError() throws Exception {
        Path ro = dir.resolve("read-only");
        Files.createDirectory(ro);
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
        // In a new user namespace even root lacks CAP_DAC_OVERRIDE, so the mode bits apply.
        ProcessBuilder pb = ChildJvm.builder(FlockHolder.class, List.of(), "flock:" + ro, "x", "EXCLUSIVE");
        List<String> cmd = new java.util.ArrayList<>(List.of("unshare", "--user"));
        cmd.addAll(pb.command());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isNotZero();
        assertThat(out).contains("LockBackendException").contains("is not writable by this user");
    }

    @Test
    void worldWritableLockDirectory_isWarnedAbout() throws Exception {
        Path open = dir.resolve("open");
        Files.createDirectory(open);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        ProcessBuilder pb = ChildJvm.builder(FlockHolder.class, List.of(), "flock:" + open, "x", "EXCLUSIVE");
        Process p = pb.redirectErrorStream(true).start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        p.getOutputStream().close();
        String rest = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(line + rest)
                .contains("is writable by every user")
                .contains("break the exclusion")
                .contains("HELD");
    }

    private LockSpace other() {
        return extra = Interlock.open("flock:" + dir);
    }

    private LockSpace extra;

    @AfterEach
    void closeExtra() {
        if (extra != null) {
            extra.close();
        }
    }
}
