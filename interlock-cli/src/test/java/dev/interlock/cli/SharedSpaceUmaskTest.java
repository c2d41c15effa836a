package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A lock space shared by two real users (setpriv), the first of whom has umask 077: the files she
 * creates used to be 0400 ({@code dir:}'s marker and name records) or 0600 ({@code flock:}'s lock
 * files), and the second user could then not use the space at all. They now get their modes from
 * the space's directory, whatever the umask.
 */
class SharedSpaceUmaskTest {
    static final int ALICE = 2601;
    static final int BOB = 2602;
    /** Their common group, which owns the shared directory (mode 2770: the setup the docs advise). */
    static final int TEAM = 2600;

    @TempDir
    Path tmp;

    @ParameterizedTest
    @ValueSource(strings = {"dir", "flock"})
    void firstUserUnderUmask077_secondUserCanUseTheSpace(String scheme) throws Exception {
        assumeTrue(Interlock.availableSchemes().containsKey(scheme), scheme + ": is not on the class path");
        assumeTrue(
                ProcessHandle.current().info().user().map("root"::equals).orElse(false),
                "needs root to act as two users");
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setAttribute(shared, "unix:gid", TEAM);
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwx---"));
        Files.setAttribute(shared, "unix:mode", 02770);
        String backend = scheme + ":" + shared;

        OtherUser.Ran alice = OtherUser.run(tmp, ALICE, TEAM, "077", "run", "--backend", backend, "x", "--", "true");
        assertThat(alice.exitCode()).as(alice.err()).isZero();
        OtherUser.Ran bob = OtherUser.run(tmp, BOB, TEAM, "022", "run", "--backend", backend, "x", "--", "true");
        assertThat(bob.exitCode()).as(bob.err()).isZero();
        OtherUser.Ran bobStatus = OtherUser.run(tmp, BOB, TEAM, "022", "status", "--backend", backend, "x");
        assertThat(bobStatus.exitCode()).as(bobStatus.err()).isZero();
    }

    /** A file of the space that the user cannot read (made by an older version) is named, with what to do, not blamed on the directory. */
    @Test
    void unreadableMarker_isNamedInTheError() throws Exception {
        assumeTrue(Interlock.availableSchemes().containsKey("dir"), "dir: is not on the class path");
        assumeTrue(
                ProcessHandle.current().info().user().map("root"::equals).orElse(false),
                "needs root to act as two users");
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setAttribute(shared, "unix:gid", TEAM);
        Files.setAttribute(shared, "unix:mode", 02770);
        OtherUser.Ran alice =
                OtherUser.run(tmp, ALICE, TEAM, "077", "run", "--backend", "dir:" + shared, "x", "--", "true");
        assertThat(alice.exitCode()).as(alice.err()).isZero();
        Path marker = shared.resolve(".interlock-dir");
        Files.setAttribute(marker, "unix:mode", 0400); // as the old code left it
        OtherUser.Ran bob = OtherUser.run(tmp, BOB, TEAM, "022", "status", "--backend", "dir:" + shared, "x");
        assertThat(bob.exitCode()).isNotZero();
        assertThat(bob.err())
                .contains("cannot read " + marker + " (mode 0400, owner " + ALICE + ")")
                .contains("chmod a+r " + marker)
                .doesNotContain("needs write access");
    }
}
