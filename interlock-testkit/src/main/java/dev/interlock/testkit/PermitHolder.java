package dev.interlock.testkit;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import java.time.Duration;

/**
 * A process that takes one permit and keeps it until it is killed, for the kill -9 and SIGSTOP
 * checks of a semaphore: prints {@code HELD <token>} once it holds, and {@code LOST} when it is
 * told that its permit is gone.
 *
 * <p>Arguments: {@code URI NAME LIMIT LEASE-MS}.
 */
public final class PermitHolder {
    private PermitHolder() {}

    public static void main(String[] args) throws Exception {
        LockSpace locks = Interlock.open(args[0]);
        Lease held = locks.lock(args[1])
                .limit(Integer.parseInt(args[2]))
                .lease(Duration.ofMillis(Long.parseLong(args[3])))
                .onLost(e -> {
                    System.out.println("LOST");
                    System.out.flush();
                })
                .acquire(Duration.ofMinutes(1));
        System.out.println("HELD " + held.token());
        System.out.flush();
        Thread.currentThread().join(); // until killed
    }
}
