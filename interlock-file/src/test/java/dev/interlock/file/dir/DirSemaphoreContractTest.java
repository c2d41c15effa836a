package dev.interlock.file.dir;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import dev.interlock.testkit.SemaphoreContract;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.io.TempDir;

/**
 * The semaphore contract on {@code dir:}. Leases are judged on each observer's own monotonic
 * ticker, so the lease-expiry case runs on fake time: both spaces read the test's ticker.
 */
class DirSemaphoreContractTest extends SemaphoreContract {
    @TempDir
    Path dir;

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("dir:" + dir);
    }

    @Override
    protected Optional<List<LockSpace>> openOnFakeTime(FakeTicker ticker, ManualScheduler timer) {
        Path root = dir.resolve("fake-time");
        try {
            Files.createDirectories(root);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        LockSpace holder = Interlock.builder("dir:" + root)
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .open();
        return Optional.of(
                List.of(holder, Interlock.builder("dir:" + root).ticker(ticker).open()));
    }
}
