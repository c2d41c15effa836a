package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.FencedWriteException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fenced commits where flock(2) on the directory fails, as on NFS without {@code local_lock=flock}
 * (issue 32: there a fenced write was always refused, and an unfenced one's rename can land after
 * a newer holder's). Under a lease the commit goes ahead: the lease keeps holders apart, and the
 * newer holder's commit withdraws an older holder's prepared write, whose rename then fails.
 */
class ReplaceTargetWithoutGateTest {
    @TempDir
    Path tmp;

    @Test
    void fencedCommit_underALease_withdrawsAnOlderHoldersWrite_whichIsThenRefused() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old\n");
        try (LockSpace locks = Interlock.open("mem:nogate");
                Lease lease = locks.acquire("f", Duration.ofSeconds(30));
                ReplaceTarget stale = ReplaceTarget.openWithoutGate(f);
                ReplaceTarget newer = ReplaceTarget.openWithoutGate(f)) {
            ReplaceTarget.Temp six = stale.createTemp(null);
            ReplaceTarget.Temp seven = newer.createTemp(null);
            try {
                stale.write(six, "six\n".getBytes(StandardCharsets.US_ASCII));
                stale.setFence(six, 6);
                newer.write(seven, "seven\n".getBytes(StandardCharsets.US_ASCII));
                newer.setFence(seven, 7);

                assertThat(newer.commit(seven, 7, lease)).isTrue();

                assertThat(tmp.resolve(six.shown())).as("withdrawn").doesNotExist();
                assertThatThrownBy(() -> stale.commit(six, 6, lease))
                        .isInstanceOfSatisfying(
                                FencedWriteException.class,
                                e -> assertThat(e.currentToken()).isEqualTo(7));
                assertThat(Files.readString(f)).isEqualTo("seven\n");
                assertThat(newer.fence()).hasValue(7);
            } finally {
                LibcFiles.close(six.fd());
                LibcFiles.close(seven.fd());
            }
        }
    }

    @Test
    void fencedCommit_withoutALease_isRefused_fileUnchanged() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old\n");
        try (ReplaceTarget t = ReplaceTarget.openWithoutGate(f)) {
            ReplaceTarget.Temp tmpFile = t.createTemp(null);
            try {
                t.write(tmpFile, "new\n".getBytes(StandardCharsets.US_ASCII));
                t.setFence(tmpFile, 3);
                assertThatThrownBy(() -> t.commit(tmpFile, 3, null))
                        .isInstanceOfSatisfying(
                                AtomicFileException.class,
                                e -> assertThat(e.reason()).isEqualTo(AtomicFileException.Reason.FENCE_UNSUPPORTED))
                        .hasMessageContaining("a fenced write without a lease needs it");
            } finally {
                t.removeTemp(tmpFile);
                LibcFiles.close(tmpFile.fd());
            }
        }
        assertThat(Files.readString(f)).isEqualTo("old\n");
    }
}
