package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The timeline of a lost lease under {@code interlock run} (docs/cli.md): declared lost a fifth of
 * the lease before the deadline (SIGTERM), SIGKILL a tenth of the lease later, so the command is
 * dead a tenth of the lease before anyone else can be granted the lock.
 */
class RunTimelineTest {
    @Test
    void killGrace_isATenthOfTheLease_atMost10s() {
        assertThat(RunCommand.killGrace(Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(3));
        assertThat(RunCommand.killGrace(Duration.ofSeconds(2))).isEqualTo(Duration.ofMillis(200));
        assertThat(RunCommand.killGrace(Duration.ofMinutes(10))).isEqualTo(Duration.ofSeconds(10));
        assertThat(RunCommand.killGrace(null)).as("flock: locks do not expire").isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void sentinelSeconds_haveMillisecondPrecision_andNeverGoNegative() {
        assertThat(Sentinel.seconds(1_234_567_891L)).isEqualTo("1.234");
        assertThat(Sentinel.seconds(-5)).isEqualTo("0.000");
        assertThat(Sentinel.seconds(Duration.ofMinutes(2).toNanos())).isEqualTo("120.000");
    }
}
