package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import org.junit.jupiter.api.Test;

class BackendFailuresTest {
    private final BackendFailures f = new BackendFailures("redis://****@cache:6379/0");

    @Test
    void messages_nameTheSpaceAndTheQuotedLock_withControlCharactersEscaped() {
        LockBackendException e = f.unreachable("a\nb", "cannot reach the server: connection refused", null);
        assertThat(e)
                .hasMessage("redis://****@cache:6379/0 - 'a\\u000ab': cannot reach the server: connection refused");
        assertThat(e.isTransient()).isTrue();
        assertThat(e.backend()).isEqualTo("redis://****@cache:6379/0");
        assertThat(e.lockName()).isEqualTo("a\nb");
    }

    @Test
    void aFailureOfTheWholeSpace_hasNoName() {
        LockBackendException e = f.refused(null, "the server is a read-only replica", null);
        assertThat(e).hasMessage("redis://****@cache:6379/0 - the server is a read-only replica");
        assertThat(e.isTransient()).isFalse();
        assertThat(e.lockName()).isNull();
    }

    @Test
    void lossesAndInterrupts_readTheSameWay() {
        LockLostException lost = f.lost("job", 7, "its lease ran out", null);
        assertThat(lost).hasMessage("redis://****@cache:6379/0 - lost 'job' (token 7): its lease ran out");
        assertThat(f.interruptedWaiting("job"))
                .hasMessage("redis://****@cache:6379/0 - interrupted while waiting for 'job'");
    }
}
