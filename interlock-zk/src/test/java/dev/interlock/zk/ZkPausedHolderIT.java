package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A holder JVM stopped with SIGSTOP past its session timeout, then continued: meanwhile its
 * session expired and another holder got the lock; once continued it learns it lost, stops
 * writing, and whatever it wrote after the new holder's grant carries a smaller token (which a
 * fenced store refuses, docs/fencing.md).
 */
class ZkPausedHolderIT {
    private static TestingServer server;

    @TempDir
    Path tmp;

    @BeforeAll
    static void startServer() throws Exception {
        server = TestZk.startFastTicking();
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    private static void signal(long pid, String sig) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                        .start()
                        .waitFor())
                .isZero();
    }

    @Test
    void sigstopPastTheSessionTimeout_thenSigcont_learnsItLost_andNeverWritesAsHolderAgain() throws Exception {
        String uri = "zk://" + server.getConnectString() + "/paused?session=3s";
        Path log = tmp.resolve("log");
        Process holder = ChildJvm.builder(PausedHolder.class, List.of(), uri, "job", log.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        List<String> said = new CopyOnWriteArrayList<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    said.add(line);
                }
            } catch (Exception e) {
                // the holder ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        try (LockSpace other = Interlock.open(uri.replace("session=3s", "session=10s"))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> said.stream().anyMatch(l -> l.startsWith("HELD ")));
            long oldToken = Long.parseLong(said.get(0).substring(5));
            await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(log));
            signal(holder.pid(), "STOP");
            long newToken;
            try (Lease next =
                    other.acquire("job", Duration.ofSeconds(30))) { // granted once the stopped holder's session expired
                newToken = next.token();
                PausedHolder.append(log, "NEW " + newToken);
                signal(holder.pid(), "CONT");
                await().atMost(Duration.ofSeconds(10))
                        .until(() -> said.contains("STOPPED") && said.stream().anyMatch(l -> l.startsWith("LOST")));
            }
            assertThat(newToken).isGreaterThan(oldToken);
            List<String> lines = Files.readAllLines(log);
            int at = lines.indexOf("NEW " + newToken);
            assertThat(at).isNotNegative();
            // After the new grant the old holder may have written only in the instant between its
            // continuation and the keeper's first look: always with its old, smaller token.
            assertThat(lines.subList(at + 1, lines.size()))
                    .allSatisfy(l -> assertThat(l).isEqualTo("WRITE " + oldToken));
        } finally {
            if (holder.isAlive()) {
                new ProcessBuilder("kill", "-CONT", Long.toString(holder.pid()))
                        .start()
                        .waitFor();
                holder.destroyForcibly();
            }
        }
    }
}
