package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/** What {@link Main} decides before it parses: whether /proc/locks is worth keeping warm. */
class MainTest {
    @Test
    void namesFlock_followsTheBackendOption() {
        assertThat(Main.namesFlock(new String[] {"status", "--backend", "flock:/var/lock/app", "x"}))
                .isTrue();
        assertThat(Main.namesFlock(new String[] {"status", "--backend=flock:/var/lock/app", "x"}))
                .isTrue();
        assertThat(Main.namesFlock(new String[] {"status", "--backend", "redis://localhost/", "x"}))
                .isFalse();
        assertThat(Main.namesFlock(new String[] {"list", "--backend=jdbc:postgresql://db/app"}))
                .isFalse();
        assertThat(Main.namesFlock(new String[] {"status", "-v", "--backend", "dir:/shared/locks", "x"}))
                .isFalse();
    }

    @Test
    void namesFlock_withoutTheOption_isTheDefaultBackend() {
        assumeTrue(System.getenv(DefaultBackend.ENV) == null, "INTERLOCK_BACKEND is set in this environment");
        assertThat(Main.namesFlock(new String[] {"status", "x"})).isTrue();
        // After "--" nothing is an option of ours.
        assertThat(Main.namesFlock(new String[] {"run", "x", "--", "--backend", "redis://h/"}))
                .isTrue();
    }
}
