package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The core asks a backend for a semaphore permit only if the backend declares {@link Capability#SEMAPHORE}. */
class SemaphoreSupportTest {
    @Test
    void aLimit_onABackendWithoutSemaphores_isRefusedByTheCore_beforeTheBackendSeesIt() throws Exception {
        AcquireSpecWaitsTest.SEEN.clear();
        try (LockSpace space = Interlock.open("spec-recorder:no-semaphores")) {
            assertThat(space.capabilities()).doesNotContain(Capability.SEMAPHORE);
            assertThatThrownBy(() -> space.lock("imports").limit(3).tryAcquire())
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("'imports'")
                    .hasMessageContaining("semaphores are not supported by mem:no-semaphores yet");
            assertThatThrownBy(() -> space.lock("imports").limit(3).acquire(Duration.ofSeconds(5)))
                    .isInstanceOf(UnsupportedOperationException.class);
            assertThat(AcquireSpecWaitsTest.SEEN)
                    .as("nothing reached the backend")
                    .isEmpty();
            space.tryAcquire("imports").orElseThrow().close();
        }
        assertThat(AcquireSpecWaitsTest.SEEN)
                .singleElement()
                .satisfies(s -> assertThat(s.limit()).as("a plain lock").isZero());
    }

    @Test
    void theLimit_reachesTheBackend_inTheAcquireSpec() {
        try (LockSpace space = Interlock.open("mem:semaphore-support")) {
            try (Lease l = space.lock("gpu").limit(8).tryAcquire().orElseThrow()) {
                assertThat(space.status("gpu").limit()).isEqualTo(8);
            }
        }
    }
}
