package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import dev.interlock.testservers.RedisTestServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock verify --limit N} as a user runs it, worker processes and all: on a real
 * semaphore ({@code redis:}, whose permits are proven by the slots, and whose killed holders'
 * permits come back after their lease), and on {@code broken:grant}, which ignores the limit and
 * must be caught by the slots.
 */
class VerifyPermitsIT {
    @TempDir
    Path tmp;

    final List<CliProcess> clis = new ArrayList<>();

    @AfterEach
    void tearDown() {
        clis.forEach(CliProcess::close);
    }

    CliProcess verify(String... args) throws IOException {
        List<String> all = new ArrayList<>(List.of("verify"));
        all.addAll(List.of(args));
        CliProcess p = CliProcess.start(List.of("-Djava.io.tmpdir=" + tmp), Map.of(), all.toArray(new String[0]));
        clis.add(p);
        return p;
    }

    @Test
    void redis_crashTest_atMostNHeldAtOnce_andEveryReleasedPermitComesBack() throws Exception {
        String backend = RedisTestServer.shared().uri(RedisTestServer.newPrefix(), "");
        CliProcess p =
                verify("--backend", backend, "--limit", "2", "-p", "4", "-d", "4s", "--lease", "500ms", "--crash-test");
        assertThat(p.exitCode(Timing.seconds(90))).as(p.out() + p.err()).isZero();
        assertThat(p.out())
                .contains(", semaphore 'interlock-verify-")
                .contains("' of 2 permits, 4 processes, 4s, crash test\n")
                .containsPattern("(?m)^acquisitions  \\d+ permits \\(\\d killed\\), \\d+/s$")
                .containsPattern("(?m)^limit         held: at most 2 held at once \\(every holder found a free slot"
                        + " among 2, tokens unique and in order\\); the most seen at once: 2")
                .containsPattern("(?m)^returned      every released permit came back")
                .containsPattern("(?m)^crash test    \\d holders? killed \\(SIGKILL\\) inside their section; the"
                        + " permit back \\(2 others held at once on the same host\\) after ")
                .containsPattern("(?m)^result        at most 2 held at once \\(exit 0\\)$");
    }

    @Test
    void aBackendThatIgnoresTheLimit_isReportedViolated_byTheSlots() throws Exception {
        CliProcess p = verify("--backend", "broken:grant", "--limit", "2", "-p", "4", "-d", "2s", "--json");
        assertThat(p.exitCode(Timing.seconds(60))).as(p.out() + p.err()).isEqualTo(2);
        assertThat(p.out())
                .startsWith("{\"result\":\"violated\",\"exitCode\":2,")
                .contains("\"limit\":2,")
                .containsPattern("\"more than 2 held at once: w\\d@\\S+ \\(token \\d+\\) found all 2 slots taken, by"
                        + " w\\d@\\S+ \\d+, w\\d@\\S+ \\d+\"");
    }
}
