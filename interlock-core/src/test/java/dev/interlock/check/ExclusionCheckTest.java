package dev.interlock.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The check must catch what it claims to catch, or every exclusion test built on it proves nothing. */
class ExclusionCheckTest {
    /** A section on host {@code host}'s clock, entering at {@code t} and leaving at {@code t + 1}. */
    private static Section ex(String host, long token, long read, long t) {
        return new Section("w@" + host, true, token, read, host, t, t + 1);
    }

    private static Section sh(String host, long token, long read, long t) {
        return new Section("w@" + host, false, token, read, host, t, t + 1);
    }

    @Test
    void aCorrectRunAcrossTwoHostsWithUnrelatedClocks_passes() {
        // Host b's clock is far behind a's: times are never compared across hosts.
        List<Section> run = List.of(
                ex("a", 1, 0, 1000), sh("b", 2, 1, 5), sh("a", 3, 1, 1002), ex("b", 4, 1, 10), ex("a", 5, 2, 1010));
        ExclusionCheck.Report r = ExclusionCheck.check(run, 0, 3);
        assertThat(r.violations()).isEmpty();
        assertThat(r.exclusive()).isEqualTo(3);
    }

    @Test
    void twoWritersThatReadTheSameValue_areALostIncrement_evenOnUnrelatedClocks() {
        List<Section> run = List.of(ex("a", 1, 0, 1000), ex("b", 2, 0, 5));
        assertThat(ExclusionCheck.check(run, 0, 1).violations())
                .anyMatch(v -> v.startsWith("lost increment: two exclusive sections read 0"))
                .anyMatch(v -> v.contains("counter is 1 after 2 exclusive sections"));
    }

    @Test
    void tokensAgainstTheCounterOrder_areViolations() {
        assertThat(ExclusionCheck.check(List.of(ex("a", 5, 0, 1), ex("b", 4, 1, 1)), 0, 2)
                        .violations())
                .anyMatch(v -> v.startsWith("token order") && v.contains("wrote before"));
        // A reader that saw writer 2's value must have a larger token than writer 2...
        assertThat(ExclusionCheck.check(List.of(ex("a", 2, 0, 1), sh("b", 1, 1, 1)), 0, 1)
                        .violations())
                .anyMatch(v -> v.contains("read what"));
        // ...and a smaller one than the writer that changed that value after it.
        assertThat(ExclusionCheck.check(List.of(sh("b", 9, 0, 1), ex("a", 2, 0, 5)), 0, 1)
                        .violations())
                .anyMatch(v -> v.contains("before") && v.contains("changed it"));
    }

    @Test
    void onOneClock_overlapsAreCaughtToo() {
        List<Section> run =
                List.of(new Section("w1", true, 1, -1, "h", 0, 10), new Section("w2", true, 2, -1, "h", 5, 20));
        assertThat(ExclusionCheck.check(run).violations()).anyMatch(v -> v.startsWith("overlap"));
    }

    @Test
    void repeatedTokens_areCaught() {
        assertThat(ExclusionCheck.check(List.of(sh("a", 5, -1, 0), sh("b", 5, -1, 9)))
                        .violations())
                .anyMatch(v -> v.contains("twice"));
    }

    @Test
    void records_roundTrip_andTheOldFormatStillReads() {
        Section s = ex("abc", 7, 3, 100);
        assertThat(Section.parse(s.source(), s.format())).isEqualTo(s);
        Section old = Section.parse("log", "SH 4 10 20");
        assertThat(old.exclusive()).isFalse();
        assertThat(old.read()).isEqualTo(-1);
        assertThat(old.enter()).isEqualTo(10);
    }

    @Test
    void records_withTheRequestTime_roundTrip() {
        Section s = new Section("w1@h", true, 7, 3, "h", 90, 100, 105);
        assertThat(s.format()).isEqualTo("EX 7 3 h 90 100 105");
        assertThat(Section.parse("w1@h", s.format())).isEqualTo(s);
        assertThat(s.waitNanos()).isEqualTo(10);
        assertThat(ex("a", 1, 0, 5).waitNanos()).as("no request time: no wait").isZero();
    }

    /** A holder killed inside its section on host a, at time t + 50 (it read {@code read}). */
    private static Section killed(long token, long read, long t) {
        return new Section("victim@a", true, token, read, "a", t, t + 50);
    }

    @Test
    void aKilledWriter_mayHaveWrittenOrNot_bothPass() {
        // Killed after reading 1, before writing: the next writer reads 1 again.
        List<Section> notWritten = List.of(ex("a", 1, 0, 0), ex("a", 3, 1, 100), ex("a", 4, 2, 110));
        assertThat(ExclusionCheck.check(notWritten, List.of(killed(2, 1, 10)), 0, 3)
                        .violations())
                .isEmpty();
        // Killed after writing 2: nobody reads 1 after it, the counter ends one higher.
        List<Section> written = List.of(ex("a", 1, 0, 0), ex("a", 3, 2, 100), ex("a", 4, 3, 110));
        ExclusionCheck.Report r = ExclusionCheck.check(written, List.of(killed(2, 1, 10)), 0, 4);
        assertThat(r.violations()).isEmpty();
        assertThat(r.sections()).isEqualTo(4);
        assertThat(r.exclusive()).isEqualTo(3);
    }

    @Test
    void aKilledWriter_excusesOneIncrementAtMost() {
        List<Section> run = List.of(ex("a", 1, 0, 0), ex("a", 3, 3, 100));
        assertThat(ExclusionCheck.check(run, List.of(killed(2, 1, 10)), 0, 4).violations())
                .anyMatch(v -> v.contains("killed ones") && v.contains("1 too many"));
        assertThat(ExclusionCheck.check(run, List.of(killed(2, 1, 10)), 0, 1).violations())
                .anyMatch(v -> v.contains("1 increments lost"));
    }

    @Test
    void aKilledHolder_stillExcludes_untilItWasKilled() {
        // Another writer entered at 30, before the holder that entered at 10 was killed at 60.
        List<Section> run = List.of(ex("a", 1, 0, 0), ex("a", 3, 1, 30));
        assertThat(ExclusionCheck.check(run, List.of(killed(2, 1, 10)), 0, 2).violations())
                .anyMatch(v -> v.startsWith("overlap"));
    }

    @Test
    void aKilledHolder_tokensFollowTheCounter() {
        List<Section> run = List.of(ex("a", 5, 0, 0), ex("b", 1, 1, 100));
        assertThat(ExclusionCheck.check(run, List.of(killed(3, 1, 10)), 0, 2).violations())
                .anyMatch(v -> v.contains("read what") && v.contains("killed"))
                .anyMatch(v -> v.contains("after killed"));
    }

    @Test
    void theCounterEvidenceComesFirst_evenAmongThousandsOfRepeatedTokens() {
        // Two processes whose tokens are per process (1, 2, 3... each), on unrelated clocks.
        List<Section> run = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            run.add(ex("a", i + 1, i, i * 10L));
            run.add(ex("b", i + 1, i, i * 10L));
        }
        ExclusionCheck.Report r = ExclusionCheck.check(run, 0, 200);
        assertThat(r.violations()).hasSize(ExclusionCheck.maxViolations());
        assertThat(r.violations().get(0)).startsWith("counter is 200 after 400 exclusive sections");
        assertThat(r.violations().get(1)).startsWith("lost increment");
        assertThat(r.violations()).as("every kind keeps a share").anyMatch(v -> v.contains("issued twice"));
    }

    @Test
    void manyLostIncrements_doNotCrowdOutTheOverlaps() {
        // One clock: every pair overlaps and read the same value.
        List<Section> run = new java.util.ArrayList<>();
        for (int i = 0; i < 200; i++) {
            run.add(new Section("w1", true, 2 * i + 1, i, "h", i * 10L, i * 10L + 8));
            run.add(new Section("w2", true, 2 * i + 2, i, "h", i * 10L + 1, i * 10L + 9));
        }
        List<String> v = ExclusionCheck.check(run, 0, 200).violations();
        assertThat(v)
                .hasSize(ExclusionCheck.maxViolations())
                .anyMatch(x -> x.startsWith("lost increment"))
                .anyMatch(x -> x.startsWith("overlap"));
        assertThat(v.get(0)).startsWith("counter is");
    }
}
