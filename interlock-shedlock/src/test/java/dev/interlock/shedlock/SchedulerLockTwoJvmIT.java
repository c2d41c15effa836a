package dev.interlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What ShedLock is for: the same {@code @Scheduled} job in two application JVMs runs once. Two
 * child JVMs ({@link ScheduledJobNode}, a real Spring context with {@code @SchedulerLock}) fire the
 * job every 100 ms on one lock space; the test waits until each has tried at least five times, then
 * checks with the exclusion checker that exactly one run happened, with a fencing token.
 */
class SchedulerLockTwoJvmIT {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"flock:", "dir:"})
    void scheduledJob_inTwoJvms_runsOnce(String scheme) throws Exception {
        String uri = scheme + dir.resolve("locks");
        List<Process> nodes = new ArrayList<>();
        List<List<String>> out = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        // What the nodes said and logged while both ran: once one is killed at the end, the other
        // rightly takes the lock over from the dead node, and that must not count as a second grant.
        List<List<String>> said = new ArrayList<>();
        List<ExclusionChecker.Interval> runs;
        try {
            for (int i = 0; i < 2; i++) {
                Path log = dir.resolve("node" + i + ".log");
                Files.createFile(log);
                logs.add(log);
                Process p = ChildJvm.start(ScheduledJobNode.class, uri, log.toString());
                nodes.add(p);
                List<String> lines = new CopyOnWriteArrayList<>();
                out.add(lines);
                Thread reader = new Thread(() -> {
                    try (BufferedReader r =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String l; (l = r.readLine()) != null; ) {
                            lines.add(l);
                        }
                    } catch (java.io.IOException e) {
                        // the node was killed
                    }
                });
                reader.setDaemon(true);
                reader.start();
            }
            await().atMost(Timing.seconds(90))
                    .until(() -> out.stream().allMatch(l -> attempts(l) >= 5)
                            || nodes.stream().anyMatch(p -> !p.isAlive()));
            assertThat(nodes).as("both nodes still run").allMatch(Process::isAlive);
            for (List<String> lines : out) {
                said.add(List.copyOf(lines));
            }
            runs = ExclusionChecker.read(logs);
            assertThat(nodes).as("both nodes ran until the snapshot").allMatch(Process::isAlive);
        } finally {
            for (Process p : nodes) {
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
            }
        }
        long granted = said.stream()
                .flatMap(List::stream)
                .filter("attempt granted"::equals)
                .count();
        assertThat(granted)
                .as("lock granted once in both JVMs together: %s", said)
                .isEqualTo(1);
        assertThat(runs).as("the job ran once").hasSize(1);
        assertThat(runs.get(0).token()).as("with a fencing token").isPositive();
        assertThat(ExclusionChecker.check(runs).violations()).isEmpty();
    }

    private static long attempts(List<String> lines) {
        return lines.stream().filter(l -> l.startsWith("attempt ")).count();
    }
}
