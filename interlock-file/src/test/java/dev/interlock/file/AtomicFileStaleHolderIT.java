package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.Timing;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kleppmann's case on a file: a holder is paused (SIGSTOP) past its lease, another takes the lock
 * and writes, the first resumes and writes. Its fenced write is refused, naming both tokens, and
 * the file keeps the newer content.
 *
 * {@snippet lang="shell" :
 * ./mvnw -B -ntp -o -pl interlock-file -am verify -Dit.test=AtomicFileStaleHolderIT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
 * }
 */
class AtomicFileStaleHolderIT {
    @TempDir
    Path tmp;

    private static void signal(long pid, String sig) throws Exception {
        assertThat(new ProcessBuilder("kill", "-" + sig, Long.toString(pid))
                        .inheritIO()
                        .start()
                        .waitFor())
                .isZero();
    }

    @Test
    void holderPausedPastItsLease_writesAfterANewerHolder_isRefused() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "first\n");
        String uri = "dir:" + tmp.resolve("locks");
        long newerToken;
        Process stale = ChildJvm.builder(AtomicFileWorker.class, List.of(), "stale", uri, "job", f.toString(), "1000")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(stale.getInputStream(), StandardCharsets.US_ASCII));
                OutputStream in = stale.getOutputStream()) {
            String held = out.readLine();
            assertThat(held).startsWith("HELD ");
            long staleToken = Long.parseLong(held.substring(5));
            signal(stale.pid(), "STOP");
            try (LockSpace locks = Interlock.open(uri);
                    Lease newer =
                            locks.acquire("job", Timing.seconds(30))) { // the paused holder's lease runs out meanwhile
                newerToken = newer.token();
                assertThat(newerToken).isGreaterThan(staleToken);
                AtomicFile.of(f).updateFenced(newer, old -> "newer\n".getBytes(StandardCharsets.US_ASCII));
            }
            signal(stale.pid(), "CONT");
            in.write("go\n".getBytes(StandardCharsets.US_ASCII));
            in.flush();
            assertThat(out.readLine()).isEqualTo("FENCED " + staleToken + " " + newerToken);
        } finally {
            stale.destroyForcibly();
            stale.waitFor();
        }
        assertThat(Files.readString(f)).isEqualTo("newer\n");
        assertThat(AtomicFile.of(f).fence()).hasValue(newerToken);
    }
}
