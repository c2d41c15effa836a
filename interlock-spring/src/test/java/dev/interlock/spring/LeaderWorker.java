package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.io.PrintStream;
import java.time.Duration;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * A node of {@link LeaderElectionIT}: Spring Integration's {@link LockRegistryLeaderInitiator}
 * over an {@link InterlockLockRegistry}, as an application would run it. Prints {@code ready},
 * then {@code granted NANOS} and {@code revoked NANOS} (this host's monotonic clock, which every
 * process of the host shares) as leadership comes and goes; stops when its standard input closes.
 *
 * <p>Arguments: {@code URI ROLE TTL_MS HEARTBEAT_MS [fixed]}; {@code fixed} turns the background
 * renewal off ({@link InterlockLockRegistry#setRenewInBackground(boolean)}), Spring's JDBC way.
 */
public final class LeaderWorker {
    private LeaderWorker() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String role = args[1];
        Duration ttl = Duration.ofMillis(Long.parseLong(args[2]));
        long heartbeat = Long.parseLong(args[3]);
        PrintStream out = System.out;
        try (LockSpace space = Interlock.open(uri)) {
            InterlockLockRegistry registry = new InterlockLockRegistry(space);
            registry.setDefaultTtl(ttl);
            registry.setRenewInBackground(!(args.length > 4 && args[4].equals("fixed")));
            LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, new Candidate() {
                @Override
                public String getRole() {
                    return role;
                }

                @Override
                public String getId() {
                    return Long.toString(ProcessHandle.current().pid());
                }

                @Override
                public void onGranted(Context ctx) {
                    say(out, "granted " + System.nanoTime());
                }

                @Override
                public void onRevoked(Context ctx) {
                    say(out, "revoked " + System.nanoTime());
                }
            });
            initiator.setHeartBeatMillis(heartbeat);
            initiator.start();
            say(out, "ready");
            while (System.in.read() >= 0) {
                // runs until the test closes our input
            }
            initiator.stop();
        }
    }

    private static void say(PrintStream out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
