package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.HolderInfo;
import dev.interlock.Mode;
import dev.interlock.check.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verdict of {@code verify --limit N} from hand-made permit records (no processes): a run
 * within the limit holds; an overbooking, found by the slots or by overlaps on one clock, a token
 * out of order and a permit never given back are violations with their evidence.
 */
class VerifyPermitReportTest {
    static final VerifyReport.Setup TWO_PERMITS =
            new VerifyReport.Setup("redis://r", "n", 3, 1_000_000_000L, 0, true, null, 1, 2);

    /** A permit section of worker {@code w} (slot {@code slot}) on clock "c". */
    static Section permit(int w, long token, int slot, long asked, long enter, long exit) {
        return new Section("w" + w + "@h", true, token, slot, "c", asked, enter, exit);
    }

    /**
     * Three workers on two permits: w0 and w1 inside together, w2 waits for w0's release, then
     * w1's place goes to w0 again; never more than two at once.
     */
    static List<Section> withinTwo() {
        List<Section> s = new ArrayList<>();
        s.add(permit(0, 1, 0, 0, 10, 100));
        s.add(permit(1, 2, 1, 0, 20, 150));
        s.add(permit(2, 3, 0, 30, 110, 200));
        s.add(permit(0, 4, 1, 120, 160, 250));
        return s;
    }

    static VerifyHostLog.HostLog host(List<Section> sections, List<Section> killed, List<PermitCheck.FullSlots> full) {
        return new VerifyHostLog.HostLog(
                "h", "c", 3, 1_000_000_000L, sections, killed, List.of(), List.of(), 0, List.of(), full);
    }

    static VerifyReport analyze(VerifyHostLog.HostLog h, List<HolderInfo> heldAfter) {
        return VerifyReport.analyze(TWO_PERMITS, List.of(h), 0, null, List.of(), List.of(), heldAfter);
    }

    @Test
    void aRunWithinTheLimit_holds_andSaysTheMostSeenAtOnce() {
        VerifyReport r = analyze(host(withinTwo(), List.of(), List.of()), List.of());
        assertThat(r.violations).isEmpty();
        assertThat(r.exitCode()).isZero();
        assertThat(r.text(List.of(), null))
                .contains("interlock verify: redis://r, semaphore 'n' of 2 permits, 3 processes, 1s, crash test\n")
                .contains("acquisitions  4 permits, 4/s\n")
                .contains("limit         held: at most 2 held at once (every holder found a free slot among 2, tokens"
                        + " unique and in order); the most seen at once: 2\n")
                .contains("returned      every released permit came back (the name lists none after the run)\n")
                .doesNotContain("counter")
                .doesNotContain("shared")
                .contains("result        at most 2 held at once (exit 0)\n");
        assertThat(r.json(null, null))
                .contains("\"limit\":2,\"mostAtOnce\":2,")
                .contains(
                        "\"counter\":null,\"permits\":{\"fullButKilled\":0,\"notReturned\":[],\"killedStillHeld\":[]}");
    }

    @Test
    void aHolderThatFoundEverySlotTaken_andThreeAtOnce_areViolations_withTheEvidence() {
        List<Section> s = withinTwo();
        // w2 let in while w0 and w1 still held theirs: it found both slots taken.
        s.set(2, permit(2, 3, -1, 30, 50, 90));
        PermitCheck.FullSlots full = new PermitCheck.FullSlots("w2@h", 3, List.of("w0@h 1", "w1@h 2"));
        VerifyReport r = analyze(host(s, List.of(), List.of(full)), List.of());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.violations)
                .contains("more than 2 held at once: w2@h (token 3) found all 2 slots taken, by w0@h 1, w1@h 2")
                .anyMatch(v -> v.startsWith("more than 2 held at once on one host: 3 sections overlap when permit"
                        + " token 3 no slot [50, 90] from w2@h entered: "));
        assertThat(r.text(List.of(), null))
                .contains("limit         VIOLATED: 2 violations:\n")
                .contains("result        SEMAPHORE LIMIT VIOLATED (exit 2)");
        assertThat(r.json(null, null)).contains("\"result\":\"violated\"").contains("\"mostAtOnce\":3");
    }

    @Test
    void manyOverbookings_areListedUpToTwentyOfEachRule_andTheScreenSaysThereWereMore() {
        List<PermitCheck.FullSlots> full = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            full.add(new PermitCheck.FullSlots("w2@h", 100 + i, List.of("w0@h 1", "w1@h 2")));
        }
        VerifyReport r = analyze(host(withinTwo(), List.of(), full), List.of());
        assertThat(r.violations).hasSize(20);
        assertThat(r.text(List.of(), null))
                .contains("limit         VIOLATED: at least 20 violations, 3 of them (up to 3 of each kind):\n");
        assertThat(r.json(null, null)).contains("\"violationsTruncated\":true");
    }

    @Test
    void tokensOutOfOrder_orIssuedTwice_areViolations() {
        List<Section> s = withinTwo();
        // w0's second permit was asked for after w1 released token 2, yet has token 2 too.
        s.set(3, permit(0, 2, 1, 160, 170, 250));
        VerifyReport r = analyze(host(s, List.of(), List.of()), List.of());
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.violations)
                .anyMatch(v -> v.startsWith("token 2 issued twice: permit token 2 slot 1 [20, 150] from w1@h and"))
                .anyMatch(v -> v.startsWith("token order: permit token 2 slot 1 [20, 150] from w1@h was released"
                        + " before permit token 2 slot 1 [170, 250] from w0@h was asked for"));
    }

    @Test
    void aReleasedPermitStillListedAfterTheRun_isNotReturned_butAKilledHoldersIsOnlyNoted() {
        Section victim = permit(1, 5, 1, 260, 270, 300);
        HolderInfo leaked =
                HolderInfo.builder(Mode.EXCLUSIVE).ownerId("h:1:2:abc").token(3).build();
        HolderInfo dead = HolderInfo.builder(Mode.EXCLUSIVE)
                .ownerId("h:7:8:def")
                .token(5)
                .validUntil(Instant.parse("2026-11-27T14:00:00Z"))
                .build();
        VerifyReport r = analyze(host(withinTwo(), List.of(victim), List.of()), List.of(leaked, dead));
        assertThat(r.exitCode()).isEqualTo(2);
        assertThat(r.violations)
                .containsExactly("permit not returned: permit token 3 slot 0 [110, 200] from w2@h was released, yet"
                        + " after the run the name still lists it (" + leaked.describe() + ")");
        assertThat(r.text(List.of(), null))
                .contains("returned      1 released permit(s) still listed after the run (see the violations); still"
                        + " held until their lease runs out, as a dead holder's permit is: the killed holders' token 5,"
                        + " lease until 2026-11-27T14:00:00Z\n");
    }

    @Test
    void aKilledHoldersSlotFoundTaken_isNotCounted_andItsPermitBackIsMeasured() {
        List<Section> s = withinTwo();
        // w1 killed at 300 in slot 1; w2 found slot 1 still the dead holder's (not yet given back) ...
        Section victim = permit(1, 5, 1, 260, 270, 300);
        s.add(permit(2, 6, -1, 290, 310, 320));
        // ... then w0 and w2 held the two permits at once from 400: the dead holder's had come back.
        s.add(permit(0, 7, 0, 330, 390, 500));
        s.add(permit(2, 8, 1, 330, 400, 480));
        PermitCheck.FullSlots full = new PermitCheck.FullSlots("w2@h", 6, List.of("w0@h 4", "w1@h 5"));
        VerifyReport r = analyze(host(s, List.of(victim), List.of(full)), List.of());
        assertThat(r.violations).isEmpty();
        assertThat(r.text(List.of(), null))
                .contains("; 1 found every slot taken, one by a killed holder whose slot was not yet given back (not"
                        + " counted)\n")
                .contains("crash test    1 holder killed (SIGKILL) inside their section; the permit back (2"
                        + " others held at once on the same host) after 100ns");
    }

    @Test
    void theFullLinesOfAWorkerLog_areRead(@TempDir Path dir) throws IOException {
        Files.writeString(
                dir.resolve("worker-0.log"),
                permit(0, 9, -1, 0, 10, 20).format() + "\n# full 9 w1@h 7|w2@h 8\n# run 0 100\n");
        VerifyHostLog.write(dir, "h", "c", 1, new VerifyWorkers.Outcome(List.of(), List.of(), List.of(), 0, 100));
        assertThat(VerifyHostLog.read(dir).full())
                .containsExactly(new PermitCheck.FullSlots("w0@h", 9, List.of("w1@h 7", "w2@h 8")));
    }
}
