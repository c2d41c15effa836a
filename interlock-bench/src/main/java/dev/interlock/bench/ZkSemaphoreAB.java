package dev.interlock.bench;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import org.apache.curator.test.TestingServer;

/**
 * {@link SemaphoreAB} on {@code zk:}: uncontended acquire + release of one permit against the
 * exclusive lock, same JVM, same in-process ZooKeeper server (started here on a random loopback
 * port), blocks alternated and the median of per-round ratios reported (docs/benchmarks.md,
 * "Semaphores: a permit against a lock").
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ZkSemaphoreAB 30 300
 * }
 * (rounds, calls per block)
 */
public final class ZkSemaphoreAB {
    private ZkSemaphoreAB() {}

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        int ops = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        try (TestingServer server = ZkSystems.server();
                LockSpace space = Interlock.open("zk://" + server.getConnectString() + "/semaphore-ab")) {
            SemaphoreAB.compare("zk:", space, rounds, ops);
        }
    }
}
