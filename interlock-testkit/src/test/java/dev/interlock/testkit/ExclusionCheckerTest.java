package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker.Interval;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker must catch what it claims to catch, or every multi-process test proves nothing. */
class ExclusionCheckerTest {
    private static Interval ex(long token, long enter, long exit) {
        return new Interval("t", true, token, enter, exit);
    }

    private static Interval sh(long token, long enter, long exit) {
        return new Interval("t", false, token, enter, exit);
    }

    @Test
    void check_sequentialExclusive_passes() {
        assertThat(ExclusionChecker.check(List.of(ex(1, 0, 10), ex(2, 11, 20), sh(3, 21, 30), sh(4, 22, 31)))
                        .ok())
                .isTrue();
    }

    @Test
    void check_overlappingExclusive_fails() {
        assertThat(ExclusionChecker.check(List.of(ex(1, 0, 10), ex(2, 5, 20))).violations())
                .anyMatch(v -> v.startsWith("overlap"));
    }

    @Test
    void check_sharedInsideExclusive_fails() {
        assertThat(ExclusionChecker.check(List.of(sh(1, 0, 100), ex(2, 50, 60))).violations())
                .anyMatch(v -> v.startsWith("overlap"));
        assertThat(ExclusionChecker.check(List.of(ex(1, 0, 100), sh(2, 50, 60))).violations())
                .anyMatch(v -> v.startsWith("overlap"));
    }

    @Test
    void check_overlapHiddenBehindALongerSection_fails() {
        assertThat(ExclusionChecker.check(List.of(sh(1, 0, 100), sh(2, 10, 20), ex(3, 30, 40)))
                        .ok())
                .isFalse();
    }

    @Test
    void check_tokenGoingBackAcrossExclusive_fails() {
        assertThat(ExclusionChecker.check(List.of(ex(5, 0, 10), ex(4, 11, 20))).violations())
                .anyMatch(v -> v.startsWith("token order"));
        assertThat(ExclusionChecker.check(List.of(ex(5, 0, 10), sh(4, 11, 20))).violations())
                .anyMatch(v -> v.startsWith("token order"));
        assertThat(ExclusionChecker.check(List.of(sh(5, 0, 10), ex(4, 11, 20))).violations())
                .anyMatch(v -> v.startsWith("token order"));
    }

    @Test
    void check_sharedTokensOutOfLogOrder_areAllowed() {
        assertThat(ExclusionChecker.check(List.of(sh(5, 0, 10), sh(4, 11, 20))).ok())
                .isTrue();
    }

    @Test
    void check_repeatedToken_fails() {
        assertThat(ExclusionChecker.check(List.of(sh(5, 0, 10), sh(5, 2, 20))).violations())
                .anyMatch(v -> v.contains("twice"));
    }
}
