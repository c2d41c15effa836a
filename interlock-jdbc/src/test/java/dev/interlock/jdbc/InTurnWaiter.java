package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * One waiting process of {@link WaitersInTurnIT}: opens the lock space, says "ready", and on "go"
 * acquires the name, waiting as long as it takes; once granted it appends its number to the grant
 * log (under the lock, so the log's order is the grant order) and releases.
 *
 * <p>Arguments: URI, lock name, this waiter's number, grant log.
 */
public final class InTurnWaiter {
    private InTurnWaiter() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        String number = args[2];
        Path grants = Path.of(args[3]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (LockSpace locks = Interlock.open(uri)) {
            System.out.println("ready");
            System.out.flush();
            if (!"go".equals(in.readLine())) {
                System.exit(2);
            }
            try (Lease lease = locks.lock(name).lease(Duration.ofSeconds(30)).acquire(Duration.ofSeconds(120))) {
                Files.writeString(grants, number + "\n", StandardCharsets.UTF_8, StandardOpenOption.APPEND);
            }
        } catch (Exception e) {
            System.err.println("waiter " + number + ": " + e.getMessage());
            System.exit(1);
        }
        System.exit(0);
    }
}
