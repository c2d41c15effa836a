package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SessionDeadlineTest {
    private static final long T = TimeUnit.SECONDS.toNanos(9);

    @Test
    void lossPoint_isTwoThirdsOfTheTimeoutAfterTheLastConfirmedSend() {
        SessionDeadline d = new SessionDeadline(T, 1_000);
        assertThat(d.earliestExpiry()).isEqualTo(1_000 + T);
        assertThat(d.lossPoint()).isEqualTo(1_000 + 2 * T / 3);
        assertThat(d.pastLossPoint(1_000 + 2 * T / 3 - 1)).isFalse();
        assertThat(d.pastLossPoint(1_000 + 2 * T / 3)).isTrue();
    }

    @Test
    void aConfirmation_movesTheLossPointFromItsSendTime_notFromItsAnswer() {
        SessionDeadline d = new SessionDeadline(T, 0);
        d.confirmed(5_000);
        assertThat(d.lossPoint()).isEqualTo(5_000 + 2 * T / 3);
        assertThat(d.silenceNanos(7_000)).isEqualTo(2_000);
    }

    @Test
    void anOlderConfirmationArrivingLate_neverMovesTheLossPointBack() {
        SessionDeadline d = new SessionDeadline(T, 0);
        d.confirmed(5_000);
        d.confirmed(3_000);
        assertThat(d.lossPoint()).isEqualTo(5_000 + 2 * T / 3);
    }

    @Test
    void theTickerMayWrapAround() {
        SessionDeadline d = new SessionDeadline(T, Long.MAX_VALUE - 10);
        d.confirmed(Long.MAX_VALUE - 10 + 20); // wrapped: later, though negative
        assertThat(d.pastLossPoint(Long.MAX_VALUE - 10 + 20 + 2 * T / 3 - 1)).isFalse();
        assertThat(d.pastLossPoint(Long.MAX_VALUE - 10 + 20 + 2 * T / 3)).isTrue();
    }
}
