package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.check.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The verdict, the numbers and their rendering, from hand-made records (no processes). */
class VerifyReportTest {
    static final VerifyReport.Setup SETUP =
            new VerifyReport.Setup("flock:/l", "n", 2, 1_000_000_000L, 0.25, true, null, 1, 0);

    /** Exclusive sections of two workers taking turns, each waiting 10ns for the other's release, reading 0, 1, 2... */
    static List<Section> turns(int n) {
        List<Section> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            long t = 100L * i;
            out.add(new Section("w" + (i % 2) + "@h", true, i + 1, i, "c", t - 20, t + 10, t + 90));
        }
        return out;
    }

    static VerifyHostLog.HostLog host(
            List<Section> sections, List<Section> killed, List<VerifyWorkers.Failure> failures) {
        return new VerifyHostLog.HostLog(
                "h", "c", 2, 1_000_000_000L, sections, killed, List.of(), List.of(), 0, failures, List.of());
    }

    @Test
    void aCleanRun_holds_withItsNumbers() {
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(turns(10), List.of(), List.of())), 0, "10\n", List.of(), List.of(), List.of());
        assertThat(r.exitCode()).isZero();
        String text = r.text(List.of("ext4 (statfs 0xEF53)"), null);
        assertThat(text)
                .contains("interlock verify: flock:/l, lock 'n', 2 processes, 1s, 25% shared, crash test\n")
                .contains("file system   ext4 (statfs 0xEF53)\n")
                .contains("acquisitions  10 (10 exclusive, 0 shared), 10/s\n")
                .contains("exclusion     held: 0 violations")
                .contains("counter       10 after 10 exclusive sections: no increment lost\n")
                .contains("hand-off      p50 20ns, p95 20ns, p99 20ns, max 20ns (9 hand-offs, release to grant)\n")
                .contains("longest wait  30ns (w")
                .contains("crash test    no holder was killed")
                .contains("result        mutual exclusion held (exit 0)\n");
        assertThat(r.json(null, null))
                .startsWith("{\"result\":\"held\",\"exitCode\":0,\"backend\":\"flock:/l\",\"name\":\"n\"")
                .contains("\"handoff\":{\"count\":9,\"p50Micros\":0,")
                .contains(
                        "\"counter\":{\"start\":0,\"end\":10,\"text\":\"10\",\"exclusiveSections\":10,\"killedExclusiveSections\":0,\"lostIncrements\":0}");
    }

    @Test
    void aHolderKilledAfterWriting_isAccounted_andItsRecoveryMeasured() {
        List<Section> s = turns(4);
        // Killed at 450 inside its section (entered 410 after reading 4 and writing 5); the next waiter (asked at 400)
        // entered at 500.
        Section victim = new Section("w0@h", true, 5, 4, "c", 395, 410, 450);
        s.add(new Section("w1@h", true, 6, 5, "c", 400, 500, 590));
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(s, List.of(victim), List.of())), 0, "6", List.of(), List.of(), List.of());
        assertThat(r.violations).isEmpty();
        assertThat(r.text(List.of(), null))
                .contains("acquisitions  6 (5 exclusive, 0 shared, 1 killed)")
                .contains(
                        "counter       6 after 5 exclusive sections and 1 killed inside theirs (each may have written or not): no increment lost")
                .contains("crash test    1 holder killed (SIGKILL) inside their section; next grant after 50ns");
        assertThat(r.json(null, null)).contains("\"crashTest\":{\"kills\":1,\"recoveryMicros\":[0]}");
    }

    @Test
    void aHolderWhoseLockOutlivesTheRun_saysSo() {
        // Killed at 450; its lease outlived the run: nobody entered after it.
        Section victim = new Section("w0@h", true, 5, 4, "c", 395, 410, 450);
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(turns(4), List.of(victim), List.of())), 0, "4", List.of(), List.of(), List.of());
        assertThat(r.text(List.of(), null))
                .contains(
                        "crash test    1 holder killed (SIGKILL) inside their section; next grant after"
                                + " never (before the end); a lease-based backend frees a dead holder's lock when its lease runs out");
        assertThat(r.json(null, null)).contains("\"recoveryMicros\":[null]");
    }

    @Test
    void lostIncrements_areViolations_shownUpToThreeOfEachKind() {
        List<Section> s = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            s.add(new Section("w" + (i % 2) + "@h", true, i + 1, i / 2, "c", 10L * i, 10L * i, 10L * i + 5));
        }
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(s, List.of(), List.of())), 0, "4", List.of(), List.of(), List.of());
        assertThat(r.exitCode()).isEqualTo(2);
        String text = r.text(List.of(), null);
        assertThat(text)
                .contains("exclusion     VIOLATED: 5 violations, 4 of them (up to 3 of each kind):\n")
                .contains("  counter is 4 after 8 exclusive sections from 0: 4 increments lost\n")
                .containsPattern(
                        "  lost increment: two exclusive sections read 0 and both wrote 1: EX token 1 read 0 \\[0, 5] from w0@h and EX token 2")
                .contains("counter       4 after 8 exclusive sections: 4 increments lost\n")
                .contains("result        MUTUAL EXCLUSION VIOLATED (exit 2)");
        assertThat(text.lines().filter(l -> l.startsWith("  lost increment")).count())
                .isEqualTo(3);
        assertThat(r.json(null, Path.of("/k")))
                .contains("\"result\":\"violated\",\"exitCode\":2")
                .contains("\"lostIncrements\":4")
                .contains("\"kept\":\"/k\"");
    }

    @Test
    void aCounterThatIsNotANumber_isAViolation() {
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(turns(2), List.of(), List.of())), 0, "1 2", List.of(), List.of(), List.of());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.violations).anyMatch(v -> v.startsWith("the counter holds '1 2'"));
    }

    @Test
    void aFailedWorker_orNoAcquisition_isIncomplete() {
        VerifyWorkers.Failure f =
                new VerifyWorkers.Failure("w1@h", 1, "dir:/x - renewal failed: Input/output error", false);
        VerifyReport r = VerifyReport.analyze(
                SETUP, List.of(host(turns(4), List.of(), List.of(f))), 0, "4", List.of(), List.of(), List.of());
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.text(List.of(), null))
                .contains(
                        "problem       worker w1@h failed (exit status 1): dir:/x - renewal failed: Input/output error")
                .contains("result        incomplete (exit 1)");
        VerifyReport none = VerifyReport.analyze(
                SETUP, List.of(host(List.of(), List.of(), List.of())), 0, "0", List.of(), List.of(), List.of());
        assertThat(none.exitCode()).isEqualTo(1);
        assertThat(none.problems).singleElement().asString().startsWith("no acquisition in 1s");
    }

    @Test
    void aMissingHost_leavesTheFinalCounterUncompared_andTheRunIncomplete() {
        VerifyReport.Setup two = new VerifyReport.Setup("dir:/l", "n", 2, 1_000_000_000L, 0.25, false, "r1", 2, 0);
        // The missing host's 5 increments are in the counter.
        VerifyReport r = VerifyReport.analyze(
                two,
                List.of(host(turns(4), List.of(), List.of())),
                0,
                "9",
                List.of("only 1 of 2 hosts finished"),
                List.of(),
                List.of());
        assertThat(r.violations).isEmpty();
        assertThat(r.exitCode()).isEqualTo(1);
        assertThat(r.text(List.of(), null))
                .contains("counter       9 after the run, not compared: the records of 1 host(s) are missing");
        assertThat(r.json(null, null)).contains("\"lostIncrements\":null");
    }

    @Test
    void hostRecords_roundTrip(@TempDir Path dir) throws IOException {
        List<Section> s = turns(3);
        StringBuilder log = new StringBuilder();
        for (Section x : s.subList(0, 2)) {
            log.append(x.format()).append('\n');
        }
        log.append("# waiting 1000 5000\n# torn 77 'x1'\n# lost 9\n# run 0 1000\n");
        Files.writeString(dir.resolve("worker-0.log"), log);
        Files.writeString(dir.resolve("worker-1.log"), s.get(2).format() + "\n");
        Section killed = new Section("w2@h", true, 4, 3, "c", 300, 310, 350);
        VerifyWorkers.Failure f = new VerifyWorkers.Failure("w 1", 70, "internal error:\nline two", true);
        VerifyHostLog.write(
                dir, "host a", "c", 2, new VerifyWorkers.Outcome(List.of(), List.of(killed), List.of(f), 100, 2100));
        VerifyHostLog.HostLog h = VerifyHostLog.read(dir);
        assertThat(h.host()).isEqualTo("host a");
        assertThat(h.clock()).isEqualTo("c");
        assertThat(h.runNanos()).isEqualTo(2000);
        assertThat(h.sections())
                .hasSize(3)
                .extracting(Section::source)
                .containsExactly("w0@host a", "w0@host a", "w1@host a");
        assertThat(h.sections().get(0).asked()).isEqualTo(-20);
        assertThat(h.killed()).containsExactly(killed);
        assertThat(h.unfinished()).containsExactly(new VerifyHostLog.Wait("w0@host a", 4000));
        assertThat(h.torn()).containsExactly("w0@host a read 'x1' from the counter (token 77)");
        assertThat(h.lostLeases()).isEqualTo(1);
        assertThat(h.failures()).containsExactly(f);
    }

    @Test
    void nanos_readsLikeAPerson() {
        assertThat(VerifyReport.nanos(850)).isEqualTo("850ns");
        assertThat(VerifyReport.nanos(41_300)).isEqualTo("41µs");
        assertThat(VerifyReport.nanos(2_345_000)).isEqualTo("2.35ms");
        assertThat(VerifyReport.nanos(45_600_000)).isEqualTo("45.6ms");
        assertThat(VerifyReport.nanos(1_250_000_000)).isEqualTo("1.25s");
    }
}
