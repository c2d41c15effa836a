package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.HolderInfo;
import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.testkit.LockSpaceContract;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirContractTest extends LockSpaceContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return "dir:" + dir;
    }

    /** Cut off: every file-system call of this process fails with EIO (a file server that stopped answering). */
    @Override
    protected dev.interlock.testkit.BackendHooks hooks() {
        return new dev.interlock.testkit.BackendHooks() {
            @Override
            public boolean cut() {
                NativeFiles.cutOff(true);
                return true;
            }

            @Override
            public void restore() {
                NativeFiles.cutOff(false);
            }
        };
    }

    @Test
    void status_showsLeaseAndBootId() throws Exception {
        String bootId = Files.readString(Path.of("/proc/sys/kernel/random/boot_id"))
                .trim()
                .replace("-", "");
        try (Lease l = locks.lock("leased")
                .mode(Mode.SHARED)
                .lease(Duration.ofSeconds(42))
                .tryAcquire()
                .orElseThrow()) {
            HolderInfo h = locks.status("leased").holders().get(0);
            assertThat(h.lease()).contains(Duration.ofSeconds(42));
            assertThat(h.bootId()).contains(bootId);
            assertThat(h.describe()).contains("lease 42000ms");
        }
    }

    /**
     * Others judge a dir: holder by the lease written in its name at acquisition, so the lease
     * cannot be lengthened: a longer renew(d) would let the holder believe in a lock others may
     * reclaim. A shorter one is fine (the holder just stops earlier).
     */
    @Test
    void renew_cannotLengthenTheLease_butMayShortenIt() {
        try (Lease l =
                locks.lock("fixed").lease(Duration.ofSeconds(10)).tryAcquire().orElseThrow()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> l.renew(Duration.ofMinutes(5)))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cannot be lengthened beyond the 10000ms");
            assertThat(l.isValid()).isTrue();
            l.renew(Duration.ofSeconds(5));
            assertThat(l.validUntil()).isBefore(java.time.Instant.now().plusSeconds(6));
        }
    }
}
