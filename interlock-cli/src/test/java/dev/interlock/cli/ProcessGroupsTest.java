package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** What {@link ProcessGroups} counts as left behind in a process group. */
class ProcessGroupsTest {
    /**
     * A zombie runs nothing: a sentinel killed with its group leaves its timer as one, reparented,
     * and {@code run} must not report it as something COMMAND left running.
     */
    @Test
    void aZombieInTheGroupIsNotALeftover() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs Linux /proc");
        // setsid: a group of its own, led by sh, which forks 'true' and then becomes sleep, which never reaps it.
        Process leader = new ProcessBuilder("setsid", "sh", "-c", "true & exec sleep 60").start();
        try {
            long group = leader.pid();
            await().atMost(Timing.seconds(10))
                    .until(() -> RunSupervisionIT.groupOf(group) == group
                            && leader.toHandle().children().anyMatch(c -> ProcessGroups.dead(c.pid())));
            assertThat(ProcessGroups.leftovers(group, 0)).containsExactly(group);
        } finally {
            leader.destroyForcibly().waitFor();
        }
    }

    @Test
    void deadIsTrueForAZombieAndFalseForARunningProcess() throws Exception {
        assertThat(ProcessGroups.dead(ProcessHandle.current().pid())).isFalse();
        Process p = new ProcessBuilder("true").start();
        await().atMost(Timing.seconds(10)).until(() -> ProcessGroups.dead(p.pid()));
        p.waitFor();
    }
}
