package dev.interlock.file.flock;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;

/**
 * Child process for tests: acquires NAME in MODE on URI (with a fourth argument N: one permit of a
 * semaphore of N), prints "HELD token", then waits for stdin to close.
 */
public final class FlockHolder {
    public static void main(String[] args) throws Exception {
        try (LockSpace locks = Interlock.open(args[0]);
                Lease lease = args.length > 3
                        ? locks.lock(args[1]).limit(Integer.parseInt(args[3])).acquire()
                        : locks.acquire(args[1], Mode.parse(args[2]))) {
            System.out.println("HELD " + lease.token());
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold until the parent closes our stdin or kills us
            }
        }
    }
}
