package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.mem.MemoryBackendProvider;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Finding the backend of a URI's scheme: this project's schemes by class name (no class path scan),
 * any other scheme through ServiceLoader, and a clear error for a scheme nobody serves.
 */
class ProvidersTest {
    @Test
    void anOwnScheme_isLoadedByName() {
        assertThat(Interlock.provider("mem")).isInstanceOf(MemoryBackendProvider.class);
    }

    @Test
    void anOwnScheme_whoseModuleIsNotOnTheClassPath_isNotFound() {
        // interlock-file is not a dependency of this module
        assertThat(Interlock.provider("flock")).isNull();
        assertThatThrownBy(() -> Interlock.open("flock:/tmp/x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no backend for scheme 'flock:'");
    }

    @Test
    void anotherScheme_isFoundThroughServiceLoader() {
        assertThat(Interlock.provider("test-only")).isInstanceOf(TestOnlyProvider.class);
        assertThat(Interlock.availableSchemes()).containsKeys("mem", "test-only");
    }

    @Test
    void anUnknownScheme_isNotFound() {
        assertThat(Interlock.provider("nosuch")).isNull();
    }

    /** Registered in this module's test resources (META-INF/services). */
    public static final class TestOnlyProvider implements LockBackendProvider {
        public TestOnlyProvider() {}

        @Override
        public Set<String> schemes() {
            return Set.of("test-only");
        }

        @Override
        public String description() {
            return "a provider found only through ServiceLoader (tests)";
        }

        @Override
        public LockBackend open(BackendConfig config) {
            throw new UnsupportedOperationException("never opened");
        }
    }
}
