package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.spi.support.ProcessIdentity;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The same-host liveness rule: a holder is dead only when its process is gone (or its pid was
 * reused) and no process is left in the process group its pid leads. {@code interlock run}
 * records the leader of the command's group, so the lock stays held while the group lives.
 */
class DirSelfTest {
    final DirSelf self = DirSelf.current();
    Process shell;
    long member = -1;

    @AfterEach
    void tearDown() throws Exception {
        if (member > 0) {
            new ProcessBuilder("kill", "-KILL", Long.toString(member)).start().waitFor();
        }
        if (shell != null) {
            shell.destroyForcibly();
        }
    }

    DirEntries.Holder holder(long pid, long startTicks) {
        return new DirEntries.Holder(30_000, 0, pid, startTicks, self.pidNs, self.bootId, "ab", self.host);
    }

    @Test
    void aLeaderWhoseGroupStillHasAProcess_isNotDead_untilTheGroupIsGone() throws Exception {
        // setsid makes the shell lead a new group; it leaves a member behind and exits.
        shell = new ProcessBuilder("setsid", "sh", "-c", "echo $$; sleep 60 & echo $!; read line").start();
        java.io.BufferedReader out = new java.io.BufferedReader(
                new java.io.InputStreamReader(shell.getInputStream(), StandardCharsets.US_ASCII));
        long leader = Long.parseLong(out.readLine().trim());
        member = Long.parseLong(out.readLine().trim());
        long start = ProcessIdentity.startTicks(leader).orElseThrow();
        DirEntries.Holder h = holder(leader, start);
        assertThat(self.provablyDead(h)).as("the leader runs").isFalse();

        shell.getOutputStream().close(); // the leader reads end of file and exits; its member stays
        assertThat(shell.waitFor(Timing.seconds(10).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                .isTrue();
        await().atMost(Timing.seconds(10)).until(() -> !Files.exists(Path.of("/proc/" + leader)));
        assertThat(self.provablyDead(h))
                .as("the leader is gone but its group still has process " + member)
                .isFalse();

        new ProcessBuilder("kill", "-KILL", Long.toString(member)).start().waitFor();
        await().atMost(Timing.seconds(10)).until(() -> self.provablyDead(h));
        member = -1;
    }

    @Test
    void aProcessThatLedNoGroup_isDeadOnceItIsGone() throws Exception {
        Process p = new ProcessBuilder("sh", "-c", "read line").start();
        long pid = p.pid();
        DirEntries.Holder h = holder(pid, ProcessIdentity.startTicks(pid).orElseThrow());
        assertThat(self.provablyDead(h)).isFalse();
        p.getOutputStream().close();
        assertThat(p.waitFor(Timing.seconds(10).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(self.provablyDead(h)).isTrue();
    }

    /**
     * A zombie under {@code sh}: the shell starts a child that waits until the shell has become
     * {@code sleep} (exec keeps the pid), then exits. {@code sleep} never reaps it, so it stays a
     * zombie, found by {@code kill(pid, 0)}, until the test ends {@code sleep}. With
     * {@code ownGroup} the child leads a group of its own (as {@code interlock run}'s sentinel
     * does) of which it is the only member.
     */
    private long zombie(boolean ownGroup) throws IOException {
        String waitForExec = "until read c < /proc/$1/comm && [ \"$c\" = sleep ]; do :; done";
        shell = new ProcessBuilder(
                        "sh",
                        "-c",
                        "p=$$; " + (ownGroup ? "setsid " : "") + "sh -c \"$1\" child \"$p\" & echo $!;"
                                + " exec sleep 600",
                        "parent",
                        waitForExec)
                .start();
        long child = Long.parseLong(new java.io.BufferedReader(
                        new java.io.InputStreamReader(shell.getInputStream(), StandardCharsets.US_ASCII))
                .readLine()
                .trim());
        await().atMost(Timing.seconds(10))
                .until(() -> ProcessIdentity.stat(child)
                        .map(ProcessIdentity.ProcStat::exited)
                        .orElse(false));
        return child;
    }

    @Test
    void aZombie_isDead_thoughKillStillFindsIt() throws Exception {
        long z = zombie(false);
        long start = ProcessIdentity.stat(z).orElseThrow().startTicks();
        assertThat(self.provablyDead(holder(z, start)))
                .as("process %d exited and is not reaped", z)
                .isTrue();
    }

    @Test
    void aZombieLeadingAGroupOfZombies_isDead() throws Exception {
        long z = zombie(true);
        assertThat(ProcessIdentity.stat(z).orElseThrow().processGroup())
                .as("it leads its own group")
                .isEqualTo(z);
        long start = ProcessIdentity.stat(z).orElseThrow().startTicks();
        assertThat(self.provablyDead(holder(z, start)))
                .as("process %d and its group can run no more", z)
                .isTrue();
    }

    @Test
    void aReusedPid_isDead() throws IOException {
        long me = ProcessHandle.current().pid();
        assertThat(self.provablyDead(holder(me, ProcessIdentity.current().startTicks() - 1)))
                .isTrue();
        assertThat(self.provablyDead(holder(me, ProcessIdentity.current().startTicks())))
                .isFalse();
    }
}
