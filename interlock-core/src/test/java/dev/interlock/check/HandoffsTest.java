package dev.interlock.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Hand-offs pair a release with the grant it let in, on one clock only. */
class HandoffsTest {
    private static Section ex(String worker, String clock, long asked, long enter, long exit) {
        return new Section(worker, true, enter, 0, clock, asked, enter, exit);
    }

    private static Section sh(String worker, String clock, long asked, long enter, long exit) {
        return new Section(worker, false, enter, 0, clock, asked, enter, exit);
    }

    @Test
    void aWaiterLetInByARelease_isAHandoff() {
        List<Handoffs.Handoff> h = Handoffs.of(List.of(ex("w1", "h", 0, 0, 100), ex("w2", "h", 50, 103, 120)));
        assertThat(h).singleElement().satisfies(x -> {
            assertThat(x.nanos()).isEqualTo(3);
            assertThat(x.from().source()).isEqualTo("w1");
        });
    }

    @Test
    void aSectionThatDidNotWait_isNoHandoff() {
        assertThat(Handoffs.of(List.of(ex("w1", "h", 0, 0, 100), ex("w2", "h", 101, 102, 120))))
                .isEmpty();
    }

    @Test
    void aWriter_isLetInByTheLastReaderToLeave() {
        List<Handoffs.Handoff> h =
                Handoffs.of(List.of(sh("r1", "h", 0, 0, 50), sh("r2", "h", 0, 1, 80), ex("w", "h", 10, 85, 90)));
        assertThat(h).singleElement().satisfies(x -> {
            assertThat(x.from().source()).isEqualTo("r2");
            assertThat(x.nanos()).isEqualTo(5);
        });
    }

    @Test
    void aReader_isLetInByTheLastWriter_notByAnotherReader() {
        List<Handoffs.Handoff> h =
                Handoffs.of(List.of(ex("w", "h", 0, 0, 50), sh("r1", "h", 10, 52, 55), sh("r2", "h", 10, 60, 70)));
        assertThat(h).extracting(x -> x.from().source()).containsExactly("w", "w");
        assertThat(h).extracting(Handoffs.Handoff::nanos).containsExactly(2L, 10L);
    }

    @Test
    void sectionsOfDifferentClocks_areNeverPaired() {
        assertThat(Handoffs.of(List.of(ex("w1", "a", 0, 0, 100), ex("w2", "b", 50, 103, 120))))
                .isEmpty();
    }

    @Test
    void percentile_isTheNearestRank() {
        long[] v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
        assertThat(Handoffs.percentile(v, 50)).isEqualTo(5);
        assertThat(Handoffs.percentile(v, 95)).isEqualTo(10);
        assertThat(Handoffs.percentile(v, 100)).isEqualTo(10);
        assertThat(Handoffs.percentile(new long[] {7}, 1)).isEqualTo(7);
        assertThat(Handoffs.percentile(new long[0], 50)).isEqualTo(-1);
        assertThatThrownBy(() -> Handoffs.percentile(v, 0)).hasMessageContaining("(0, 100]");
    }
}
