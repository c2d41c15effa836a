package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.file.internal.ReplaceTarget;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kill -9} at random moments of many {@link AtomicFile} writes: after every kill the file
 * is whole (the last content the writer reported, or the one it was renaming: never torn, never
 * empty), with its owner, group and mode; the next writer removes what the dead one left behind.
 * The moment of each kill is random because the writer keeps writing while the test reads a
 * random number of its reports.
 *
 * {@snippet lang="shell" :
 * ./mvnw -B -ntp -o -pl interlock-file -am verify -Dit.test=AtomicFileCrashIT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
 * }
 */
class AtomicFileCrashIT {
    @TempDir
    Path tmp;

    private List<String> temps() throws Exception {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(ReplaceTarget.TEMP_PREFIX))
                    .toList();
        }
    }

    @Test
    void killNine_atRandomPoints_fileIsAlwaysWhole_withItsOwnerAndMode() throws Exception {
        Path f = tmp.resolve("f");
        AtomicFile.of(f).write(AtomicFileWorker.content(0));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        Files.setAttribute(f, "unix:gid", 4321);
        long seed = System.nanoTime();
        Random random = new Random(seed);
        long landed = 0;
        int kills = 25;
        for (int round = 0; round < kills; round++) {
            Process p = ChildJvm.builder(AtomicFileWorker.class, List.of(), "loop", f.toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            long printed;
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII))) {
                String ready = out.readLine();
                assertThat(ready).as("seed %d round %d", seed, round).startsWith("READY ");
                assertThat(Long.parseLong(ready.substring(6)))
                        .as("what the file held when the writer started")
                        .isGreaterThanOrEqualTo(landed);
                int reports = 1 + random.nextInt(12);
                printed = -1;
                for (int i = 0; i < reports; i++) {
                    printed = Long.parseLong(out.readLine());
                }
                // SIGKILL, wherever the writer is (not Process.destroyForcibly, which also closes our end of its
                // stdout)
                assertThat(new ProcessBuilder("kill", "-KILL", Long.toString(p.pid()))
                                .inheritIO()
                                .start()
                                .waitFor())
                        .isZero();
                assertThat(p.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                        .isTrue();
                String line;
                while ((line = out.readLine()) != null) {
                    printed = Long.parseLong(line); // reported before it died
                }
            }
            long now = AtomicFileWorker.number(Files.readAllBytes(f)); // throws if torn or empty
            assertThat(now)
                    .as("seed %d round %d: the last reported content or the next", seed, round)
                    .isBetween(printed, printed + 1);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f)))
                    .isEqualTo("rw-r-----");
            assertThat(Files.getAttribute(f, "unix:gid")).isEqualTo(4321);
            assertThat(temps()).as("at most the dead writer's temporary file").hasSizeLessThanOrEqualTo(1);
            landed = now;
        }
        AtomicFile.of(f).write(AtomicFileWorker.content(landed + 1));
        assertThat(temps()).as("the next writer removed the leftovers").isEmpty();
        assertThat(AtomicFileWorker.number(Files.readAllBytes(f))).isEqualTo(landed + 1);
    }
}
