package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock update} against someone who can write FILE's directory, and against files that
 * are not regular files. These tests run as root (as the update they attack would), so the victims
 * are files that only root may write.
 */
class UpdateSafetyProcessTest {
    @TempDir
    Path tmp;

    Path locks;
    Path data;
    Path victim;
    String backend;

    @BeforeEach
    void setUp() throws Exception {
        locks = Files.createDirectory(tmp.resolve("locks"));
        data = Files.createDirectory(tmp.resolve("data"));
        backend = "flock:" + locks;
        victim = tmp.resolve("victim");
        Files.writeString(victim, "root only\n");
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
    }

    private CliProcess update(Path file, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("update", "--backend", backend, file.toString(), "--"));
        args.addAll(List.of(command));
        return CliProcess.start(List.of(), Map.of(), args.toArray(new String[0]));
    }

    /** Temporary files of any update, of this code or of earlier versions. */
    private List<Path> temps() throws IOException {
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> p.getFileName().toString().contains("interlock")
                            && p.getFileName().toString().endsWith(".tmp"))
                    .toList();
        }
    }

    private void assertVictimUntouched() throws IOException {
        assertThat(Files.readString(victim)).isEqualTo("root only\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(victim)))
                .isEqualTo("rw-------");
    }

    /** Still there and still not a regular file, directory or link: not replaced. */
    private static boolean isOther(Path p) throws IOException {
        return Files.readAttributes(p, java.nio.file.attribute.BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                .isOther();
    }

    private static void mkfifo(Path p) throws Exception {
        Process mk = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
        assertThat(mk.waitFor()).isZero();
    }

    /** Reads the first line COMMAND writes to a FIFO: the sign that it runs. Bounded, in case it never does. */
    private static String awaitLine(Path fifo, CliProcess p) throws Exception {
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(Files.newInputStream(fifo).readAllBytes(), StandardCharsets.UTF_8).trim();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            return line.get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("COMMAND did not start; interlock's stderr: " + p.err(), e);
        }
    }

    /** Lets COMMAND go on (it blocks reading the FIFO). Bounded, in case it is gone. */
    private static void release(Path fifo) throws Exception {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            try (OutputStream out = Files.newOutputStream(fifo)) {
                out.write("go\n".getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        done.get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The attack that made root overwrite a root-only file: while COMMAND runs, another user who
     * can write FILE's directory replaces the temporary file with a symbolic link to the victim.
     * The old code reopened the temporary file by name (to flush it) and renamed whatever was
     * there over FILE, so FILE became a link to the victim. Now the update notices that the
     * temporary name no longer holds its file and leaves FILE alone; the victim is never opened.
     */
    @Test
    void tempSwappedForSymlinkWhileCommandRuns_victimUntouched_fileUnchanged() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "old\n");
        Path ready = tmp.resolve("ready");
        Path go = tmp.resolve("go");
        mkfifo(ready);
        mkfifo(go);
        try (CliProcess p = update(
                f,
                "sh",
                "-c",
                "cat >/dev/null; echo ready > \"$1\"; read x < \"$2\"; echo new",
                "sh",
                ready.toString(),
                go.toString())) {
            assertThat(awaitLine(ready, p)).isEqualTo("ready");
            List<Path> temps = temps();
            assertThat(temps).as("the temporary file while COMMAND runs").hasSize(1);
            Path t = temps.get(0);
            Files.delete(t); // the attacker, who may write the directory
            Files.createSymbolicLink(t, victim);
            release(go);
            int code = p.exitCode();
            assertVictimUntouched();
            assertThat(Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS))
                    .as("FILE is still a regular file")
                    .isTrue();
            assertThat(code).as("stderr: " + p.err()).isEqualTo(73);
            assertThat(Files.readString(f)).isEqualTo("old\n");
            assertThat(p.err())
                    .contains("was removed or replaced while the new content was made")
                    .contains("is unchanged");
            assertThat(Files.isSymbolicLink(t))
                    .as("what the attacker planted is not ours to remove")
                    .isTrue();
        }
    }

    /** Root updating another user's file used to leave it root:root 0644; owner, group and mode (setuid too) are kept. */
    @Test
    void rootKeepsOwnerGroupAndMode_ofAnotherUsersFile() throws Exception {
        Path f = data.resolve("theirs");
        Files.writeString(f, "a\n");
        Files.setAttribute(f, "unix:uid", 1234);
        Files.setAttribute(f, "unix:gid", 2345);
        Files.setAttribute(f, "unix:mode", 04640); // chown clears setuid: the mode must be set after the owner
        try (CliProcess p = update(f, "sed", "s/a/b/")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
        }
        assertThat(Files.readString(f)).isEqualTo("b\n");
        assertThat(Files.getAttribute(f, "unix:uid")).isEqualTo(1234);
        assertThat(Files.getAttribute(f, "unix:gid")).isEqualTo(2345);
        assertThat(Integer.toOctalString((Integer) Files.getAttribute(f, "unix:mode") & 07777))
                .isEqualTo("4640");
    }

    @Test
    void fifo_isRefusedAtOnce_withoutHanging() throws Exception {
        Path fifo = data.resolve("fifo");
        mkfifo(fifo);
        assertRefused(fifo, "is a FIFO (named pipe), not a regular file");
        assertThat(isOther(fifo)).isTrue();
    }

    @Test
    void characterDevice_isRefused() throws Exception {
        Path dev = data.resolve("null");
        // A device node of our own, never /dev/null: an update that wrongly accepted a device would
        // replace it with a regular file, and /dev/null belongs to every process on the machine.
        Process mk = new ProcessBuilder("mknod", dev.toString(), "c", "1", "3")
                .inheritIO()
                .start();
        assumeTrue(mk.waitFor() == 0, "mknod is not permitted here");
        assertRefused(dev, "is a character device, not a regular file");
        assertThat(isOther(dev)).isTrue();
    }

    @Test
    void socket_isRefused() throws Exception {
        Path sock = data.resolve("sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            assertRefused(sock, "is a socket, not a regular file");
            assertThat(isOther(sock)).isTrue();
        }
    }

    @Test
    void directory_isRefused() throws Exception {
        Path d = Files.createDirectory(data.resolve("d"));
        assertRefused(d, "is a directory");
        assertRefused(d.resolve(".."), "is a directory");
    }

    /**
     * A link as FILE is refused, not followed (someone who can write the directory could point it
     * elsewhere), and the message names the file it points to, to pass instead.
     */
    @Test
    void symlink_isRefused_namingItsTarget() throws Exception {
        Path link = data.resolve("link");
        Files.createSymbolicLink(link, victim);
        assertRefused(link, "is a symbolic link to " + victim, "pass the path it points to, " + victim);
        assertThat(Files.readSymbolicLink(link)).isEqualTo(victim);
        assertVictimUntouched();
        Path rel = data.resolve("rel");
        Files.createSymbolicLink(rel, Path.of("../victim"));
        assertRefused(
                rel,
                "is a symbolic link to ../victim",
                "pass the path it points to, " + data.toRealPath() + "/../victim");
        assertVictimUntouched();
    }

    /** Exit 64 at once, a message saying what FILE is, COMMAND not run, nothing created. */
    private void assertRefused(Path file, String... says) throws Exception {
        Path ran = tmp.resolve("ran");
        try (CliProcess p = update(file, "sh", "-c", "touch \"$0\"", ran.toString())) {
            assertThat(p.exitCode(Timing.seconds(15))).as(p.err()).isEqualTo(64);
            assertThat(p.err()).contains(says).doesNotContain("Exception");
        }
        assertThat(ran).doesNotExist();
        assertThat(temps()).isEmpty();
    }

    /**
     * A writer killed with SIGKILL while COMMAND runs leaves FILE as it was and its temporary file
     * behind; the next update of FILE (holding the lock, so no live writer owns a temporary file)
     * removes it. Entries with a matching name that are not regular files are left alone, and a
     * link is never followed.
     */
    @Test
    void leftoverOfKilledWriter_isRemovedByTheNext_butNotLinksOrDirectories() throws Exception {
        Path f = data.resolve("f");
        Files.writeString(f, "1\n");
        Path ready = tmp.resolve("ready");
        Path pidFile = tmp.resolve("pid");
        Path never = tmp.resolve("never");
        mkfifo(ready);
        mkfifo(never);
        long commandPid;
        try (CliProcess p = update(
                f,
                "sh",
                "-c",
                "echo $$ > \"$2\"; cat; echo partial; echo ready > \"$1\"; read x < \"$3\"",
                "sh",
                ready.toString(),
                pidFile.toString(),
                never.toString())) {
            assertThat(awaitLine(ready, p)).isEqualTo("ready");
            commandPid = Long.parseLong(Files.readString(pidFile).trim());
            p.process.destroyForcibly(); // SIGKILL
            assertThat(p.process.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
        } finally {
            // COMMAND outlives interlock (that is supervised elsewhere); stop it here.
            ProcessHandle.of(Long.parseLong(Files.readString(pidFile).trim()))
                    .ifPresent(ProcessHandle::destroyForcibly);
        }
        awaitGone(commandPid);
        assertThat(Files.readString(f)).isEqualTo("1\n");
        List<Path> left = temps();
        assertThat(left).as("the killed writer's temporary file").hasSize(1);
        String hash = HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256").digest("f".getBytes(StandardCharsets.UTF_8)), 0, 8);
        Path plantedLink = data.resolve(".interlock-" + hash + ".0123456789abcdef.tmp");
        Files.createSymbolicLink(plantedLink, victim);
        Path plantedDir = Files.createDirectory(data.resolve(".interlock-" + hash + ".fedcba9876543210.tmp"));
        Path other = data.resolve(".interlock-" + hash + ".0123456789abcdef.tmp.keep");
        Files.writeString(other, "not ours\n");

        try (CliProcess p = update(f, "sh", "-c", "read n; echo $((n + 1))")) {
            assertThat(p.exitCode()).as(p.err()).isZero();
            assertThat(left.get(0))
                    .as("the killed writer's temporary file, after the next update")
                    .doesNotExist();
            assertThat(p.err()).contains("removed " + left.get(0).getFileName()).contains("interrupted");
        }
        assertThat(left.get(0).getFileName().toString()).matches("\\.interlock-" + hash + "\\.[0-9a-f]{16}\\.tmp");
        assertThat(Files.readString(f)).isEqualTo("2\n");
        assertThat(Files.isSymbolicLink(plantedLink)).isTrue();
        assertThat(plantedDir).isDirectory();
        assertThat(other).hasContent("not ours");
        assertVictimUntouched();
    }

    private static void awaitGone(long pid) throws InterruptedException {
        var h = ProcessHandle.of(pid);
        if (h.isPresent()) {
            try {
                h.get().onExit().get(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new AssertionError("COMMAND " + pid + " did not end", e);
            }
        }
    }

    /**
     * A user who may write FILE (mode 0666) but does not own it cannot give the new content FILE's
     * owner: update refuses before running COMMAND, rather than silently making FILE theirs. Its
     * own file is updated with owner, group and mode kept.
     */
    @Test
    void nonOwner_isRefusedBeforeCommandRuns_ownerUpdatesKeepingMode() throws Exception {
        int nobody = 65534;
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx"));
        Path userLocks = Files.createDirectory(tmp.resolve("user-locks"));
        Files.setAttribute(userLocks, "unix:uid", nobody);
        Files.setPosixFilePermissions(userLocks, PosixFilePermissions.fromString("rwx------"));
        Path rootsFile = shared.resolve("roots");
        Files.writeString(rootsFile, "root's\n");
        Files.setPosixFilePermissions(rootsFile, PosixFilePermissions.fromString("rw-rw-rw-"));
        Path ran = shared.resolve("ran");
        OtherUser.Ran refused = asUser(
                nobody,
                "update",
                "--backend",
                "flock:" + userLocks,
                rootsFile.toString(),
                "--",
                "sh",
                "-c",
                "touch \"$0\"; echo mine",
                ran.toString());
        assertThat(refused.exitCode()).as(refused.err()).isEqualTo(73);
        assertThat(refused.err())
                .contains("belongs to root (0)")
                .contains("run it as the file's owner")
                .contains("is unchanged");
        assertThat(ran).doesNotExist();
        assertThat(Files.readString(rootsFile)).isEqualTo("root's\n");
        assertThat(Files.getAttribute(rootsFile, "unix:uid")).isEqualTo(0);
        try (Stream<Path> s = Files.list(shared)) {
            assertThat(s.map(x -> x.getFileName().toString())).containsExactly("roots");
        }

        Path theirs = shared.resolve("theirs");
        Files.writeString(theirs, "a\n");
        Files.setAttribute(theirs, "unix:uid", nobody);
        Files.setAttribute(theirs, "unix:gid", nobody);
        Files.setPosixFilePermissions(theirs, PosixFilePermissions.fromString("rw-r-----"));
        OtherUser.Ran own =
                asUser(nobody, "update", "--backend", "flock:" + userLocks, theirs.toString(), "--", "sed", "s/a/b/");
        assertThat(own.exitCode()).as(own.err()).isZero();
        assertThat(Files.readString(theirs)).isEqualTo("b\n");
        assertThat(Files.getAttribute(theirs, "unix:uid")).isEqualTo(nobody);
        assertThat(Files.getAttribute(theirs, "unix:gid")).isEqualTo(nobody);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(theirs)))
                .isEqualTo("rw-r-----");
    }

    private OtherUser.Ran asUser(int uid, String... args) throws Exception {
        return OtherUser.run(tmp, uid, uid, null, args);
    }
}
