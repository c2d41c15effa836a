package dev.interlock.zk;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A holder JVM for {@link ZkPausedHolderIT}: takes the lock, prints {@code HELD token}, then every
 * 10ms appends {@code WRITE token} to the shared log while {@code isValid()} says it holds the
 * lock; prints {@code LOST} when told, and stops writing.
 *
 * <p>Arguments: {@code URI NAME LOG}.
 */
public final class PausedHolder {
    private PausedHolder() {}

    public static void main(String[] args) throws Exception {
        Path log = Path.of(args[2]);
        try (LockSpace locks = Interlock.open(args[0]);
                Lease lease = locks.acquire(args[1], java.time.Duration.ofSeconds(30))) {
            lease.onLost(e -> {
                System.out.println("LOST " + e.getMessage());
                System.out.flush();
            });
            System.out.println("HELD " + lease.token());
            System.out.flush();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < until) {
                if (lease.isValid()) {
                    append(log, "WRITE " + lease.token());
                } else {
                    System.out.println("STOPPED");
                    System.out.flush();
                    break;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // the holder's work, paced
            }
        }
    }

    static synchronized void append(Path log, String line) throws IOException {
        Files.writeString(
                log, line + "\n", StandardCharsets.US_ASCII, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
}
