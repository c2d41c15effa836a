package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {
    private static final long MS = 1_000_000;

    @Test
    void fixed_drawsFromHalfToOneAndAHalfPoll_soTheMeanIsThePoll() {
        Backoff low = Backoff.fixed(Duration.ofMillis(200)).withRandom(bound -> 0);
        Backoff high = Backoff.fixed(Duration.ofMillis(200)).withRandom(bound -> bound);
        Backoff mid = Backoff.fixed(Duration.ofMillis(200)).withRandom(bound -> bound / 2);
        for (int i = 0; i < 5; i++) {
            assertThat(low.nextNanos()).isEqualTo(100 * MS);
            assertThat(high.nextNanos()).isEqualTo(300 * MS);
            assertThat(mid.nextNanos()).isEqualTo(200 * MS);
        }
    }

    @Test
    void fixed_withTheRealRandom_staysInItsRange_andAveragesThePoll() {
        Backoff b = Backoff.fixed(Duration.ofMillis(100));
        long sum = 0;
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            long d = b.nextNanos();
            assertThat(d).isBetween(50 * MS, 150 * MS);
            sum += d;
        }
        assertThat((double) sum / n).isCloseTo(100.0 * MS, org.assertj.core.data.Percentage.withPercentage(2));
    }

    @Test
    void exponential_doublesItsMeanUpToTheCap_andResetStartsAgain() {
        Backoff b = Backoff.exponential(Duration.ofMillis(10), Duration.ofMillis(70))
                .withRandom(bound -> bound / 2);
        assertThat(b.nextNanos()).isEqualTo(10 * MS);
        assertThat(b.nextNanos()).isEqualTo(20 * MS);
        assertThat(b.nextNanos()).isEqualTo(40 * MS);
        assertThat(b.nextNanos()).isEqualTo(70 * MS);
        assertThat(b.nextNanos()).isEqualTo(70 * MS);
        b.reset();
        assertThat(b.nextNanos()).isEqualTo(10 * MS);
        assertThat(b.capNanos()).isEqualTo(70 * MS);
    }

    @Test
    void aCapBelowTheStart_isRefusedInWords() {
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 < initial <= cap");
        assertThatThrownBy(() -> Backoff.fixed(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
