package dev.interlock.mem;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * An owner-checked release says whether it freed anything ({@link Grant#releaseIfOwned()}), so
 * that the core never reports as released a lock that had passed to another holder.
 */
class ReleaseIfOwnedTest {
    static Grant grant(MemoryBackend b, String name, Owner owner) {
        AcquireSpec spec = AcquireSpec.builder(name, Mode.EXCLUSIVE, owner)
                .lease(Duration.ofSeconds(30))
                .build();
        return b.attempt(spec).tryAcquire().orElseThrow();
    }

    @Test
    void aReleaseOfALockThatPassedToAnotherHolder_changesNothing_andSaysSo() throws Exception {
        MemoryBackend.forget("release-if-owned");
        try (LockSpace space = Interlock.open("mem:release-if-owned")) {
            MemoryBackend b = MemoryBackend.of("release-if-owned").orElseThrow();
            Owner firstOwner = Owner.newAcquisition();
            Grant first = grant(b, "a", firstOwner);
            assertThat(b.takeAway("a", firstOwner.id())).isTrue(); // as another host reclaiming its expired lease would
            Grant second = grant(b, "a", Owner.newAcquisition());
            assertThat(first.releaseIfOwned()).as("the first holder's release").isFalse();
            assertThat(b.inspect("a").holders())
                    .as("the second holder keeps the lock")
                    .hasSize(1);
            assertThat(second.releaseIfOwned()).as("the holder's own release").isTrue();
            assertThat(b.inspect("a").holders()).isEmpty();
        }
    }

    @Test
    void aBackendThatDoesNotTell_isTakenAtItsWord() {
        boolean[] released = {false};
        Grant old = new Grant() {
            @Override
            public long token() {
                return 1;
            }

            @Override
            public Instant acquiredAt() {
                return Instant.EPOCH;
            }

            @Override
            public void renew(Duration lease) {}

            @Override
            public void release() {
                released[0] = true;
            }
        };
        assertThat(old.releaseIfOwned()).isTrue();
        assertThat(released[0]).isTrue();
    }
}
