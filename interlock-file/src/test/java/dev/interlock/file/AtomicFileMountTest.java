package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AtomicFile} on file systems that refuse: read-only, full, without user extended
 * attributes; and on a file the writer may not read. Each case mounts one in a private mount namespace ({@code unshare -rm}) over a
 * directory of ours, runs a writer there ({@link AtomicFileWorker}), and shows what the file holds
 * afterwards: the old content, with a message that says what is wrong.
 */
class AtomicFileMountTest {
    @TempDir
    Path tmp;

    @BeforeAll
    static void canUnshare() throws Exception {
        boolean ok;
        try {
            Process p = new ProcessBuilder("unshare", "-rm", "true")
                    .redirectErrorStream(true)
                    .start();
            ok = p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            ok = false;
        }
        assumeTrue(ok, "needs unshare -rm (user and mount namespaces)");
    }

    /** Runs {@code setup} (sh, $D the directory) in a private mount namespace, then the worker, then shows the directory. */
    private String inNamespace(String setup, String... worker) throws Exception {
        Path d = Files.createDirectory(tmp.resolve("d"));
        ProcessBuilder jvm = ChildJvm.builder(AtomicFileWorker.class, List.of(), worker);
        List<String> cmd = new ArrayList<>(List.of(
                "unshare",
                "-rm",
                "sh",
                "-c",
                "D=\"$0\"; " + setup
                        + " || exit 99; \"$@\"; echo \"rc=$?\"; echo \"content=$(cat \"$D/f\")\"; ls -a \"$D\"",
                d.toString()));
        cmd.addAll(jvm.command());
        for (int i = 0; i < cmd.size(); i++) {
            cmd.set(i, cmd.get(i).replace("@D@", d.toString()));
        }
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        assertThat(p.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(out).as("setup: " + setup).doesNotContain("rc=99").isNotEmpty();
        return out;
    }

    /** What ls showed, after the content. */
    private static String listing(String out) {
        return out.substring(out.indexOf("content="));
    }

    @Test
    void readOnlyFileSystem_clearError_oldContent() throws Exception {
        String out = inNamespace(
                "printf old > \"$D/f\" && mount --bind \"$D\" \"$D\" && mount -o remount,bind,ro \"$D\"",
                "write",
                "@D@/f",
                "100");
        assertThat(out)
                .contains("REFUSED IO: cannot create a temporary file in")
                .contains("read-only file system (EROFS)")
                .contains("is unchanged")
                .contains("rc=3")
                .contains("content=old");
        assertThat(listing(out)).as("no temporary file left").doesNotContain(".interlock-");
    }

    @Test
    void diskFull_clearError_oldContent_noTemporaryFileLeft() throws Exception {
        String out = inNamespace(
                "mount -t tmpfs -o size=64k none \"$D\" && printf old > \"$D/f\""
                        + " && { head -c 1000000 /dev/zero > \"$D/fill\" 2>/dev/null; true; }",
                "write",
                "@D@/f",
                "200000");
        assertThat(out)
                .contains("REFUSED IO: cannot write the new content of")
                .contains("no space left on device (ENOSPC)")
                .contains("is unchanged")
                .contains("rc=3")
                .contains("content=old");
        assertThat(listing(out)).as("no temporary file left").doesNotContain(".interlock-");
    }

    /**
     * A file the writer may not read (root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, on a
     * file of mode 0000): a clear error, never a replacement made without the old content.
     */
    @Test
    void unreadableFile_clearError_oldContent() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old");
        Files.setPosixFilePermissions(f, java.util.Set.of());
        ProcessBuilder jvm = ChildJvm.builder(AtomicFileWorker.class, List.of(), "write", f.toString(), "3");
        List<String> cmd = new ArrayList<>(List.of("setpriv", "--bounding-set", "-dac_override,-dac_read_search"));
        cmd.addAll(jvm.command());
        Process p;
        try {
            p = new ProcessBuilder(cmd)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
        } catch (IOException e) {
            assumeTrue(false, "needs setpriv");
            return;
        }
        assertThat(p.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assumeTrue(
                !out.startsWith("OK"),
                "the writer can read a mode 0000 file: not root, or setpriv did not drop the capabilities");
        assertThat(out)
                .contains("REFUSED IO: cannot read " + tmp.toRealPath().resolve("f"))
                .contains("permission denied (EACCES)")
                .contains("it is unchanged");
        assertThat(p.exitValue()).isEqualTo(3);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-------"));
        assertThat(Files.readString(f)).isEqualTo("old");
        try (var s = Files.list(tmp)) {
            assertThat(s.map(x -> x.getFileName().toString())).containsExactly("f");
        }
    }

    /** Where the token cannot travel with the content, a fenced write is an error, never an unfenced write. */
    @Test
    void noUserXattrs_fencedWriteRefused_unfencedWorks() throws Exception {
        String out = inNamespace("mount -t ramfs none \"$D\" && printf old > \"$D/f\"", "write", "@D@/f", "3", "7");
        assertThat(out)
                .contains("REFUSED FENCE_UNSUPPORTED: cannot fence writes to")
                .contains("keeps no user extended attributes")
                .contains("is unchanged")
                .contains("rc=3")
                .contains("content=old");
        assertThat(listing(out)).as("no temporary file left").doesNotContain(".interlock-");
        Files.delete(tmp.resolve("d"));
        out = inNamespace("mount -t ramfs none \"$D\" && printf old > \"$D/f\"", "write", "@D@/f", "3");
        assertThat(out).contains("OK").contains("rc=0").contains("content=xxx");
    }
}
