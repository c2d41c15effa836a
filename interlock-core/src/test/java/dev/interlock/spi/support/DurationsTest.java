package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void parse_units_andCombinations() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Durations.parse("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("2d")).isEqualTo(Duration.ofDays(2));
        assertThat(Durations.parse("1h30m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(Durations.parse("1m30.5s")).isEqualTo(Duration.ofMillis(90_500));
        assertThat(Durations.parse("1.5h")).isEqualTo(Duration.ofMinutes(90));
    }

    @Test
    void parse_plainSeconds_likeFlockW() {
        assertThat(Durations.parse("2.5")).isEqualTo(Duration.ofMillis(2500));
        assertThat(Durations.parse("0")).isEqualTo(Duration.ZERO);
        assertThat(Durations.parse("10")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse(".25")).isEqualTo(Duration.ofMillis(250));
    }

    @Test
    void parse_garbage_namesTheAcceptedForms() {
        for (String bad : new String[] {"", "abc", "5x", "-1s", "1h 30m", "s", "1..2", "1e3", "5 m", "m5"}) {
            assertThatThrownBy(() -> Durations.parse(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("500ms, 30s, 5m, 1h");
        }
    }

    @Test
    void parse_overflow_isAnError() {
        assertThatThrownBy(() -> Durations.parse("999999999999d")).hasMessageContaining("too long");
    }

    @Test
    void format_isShortAndReadable() {
        assertThat(Durations.format(Duration.ofMillis(250))).isEqualTo("250ms");
        assertThat(Durations.format(Duration.ofMillis(4500))).isEqualTo("4.5s");
        assertThat(Durations.format(Duration.ofSeconds(3723))).isEqualTo("1h2m3s");
        assertThat(Durations.format(Duration.ofMinutes(5))).isEqualTo("5m");
    }
}
