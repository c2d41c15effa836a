package dev.interlock.bench;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ClientCnxn;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.proto.Create2Response;
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.ReplyHeader;
import org.apache.zookeeper.proto.RequestHeader;

/**
 * Whether a cheaper way to send a queue lock's three requests (create an ephemeral-sequential
 * place, list the queue, delete the place) exists on the client's side, with 8 threads on 8
 * names and one session: the column where {@code zk:} and Curator's mutex are level
 * (docs/benchmarks.md, "`zk:` against Curator's recipes"). The paths, rotated round by round in
 * one JVM against one in-process server:
 *
 * <ul>
 *   <li>{@code callback}: Interlock's: the create sent asynchronously, the listing at once behind
 *       it (one round trip), the create's answer taken from its callback (run by the client's
 *       event thread);
 *   <li>{@code nocallback}: the same two requests, the create queued on the connection with no
 *       callback (ZooKeeper's own internals, reached by reflection: not something a library can
 *       ship), its answer read after the listing returns, so the event thread never runs;
 *   <li>{@code sequential}: Curator's: create, then list, then delete, each waited for;
 *   <li>{@code callback-small}: Interlock's path with a node data of 9 bytes (Curator's is the
 *       client's address) instead of the 60 of Interlock's owner, mode, limit and session.
 * </ul>
 *
 * Reports cycles/s and the JVM's CPU time per cycle (client and server together).
 *
 * {@snippet lang="shell" :
 * ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
 * java -cp interlock-bench/target/benchmarks.jar dev.interlock.bench.ZkRequestPaths 9 4 callback,nocallback,sequential
 * }
 * (rounds, seconds per window, paths)
 */
public final class ZkRequestPaths {
    private static final int THREADS = 8;
    private static final byte[] INTERLOCK_DATA =
            "owner=host.example:12345:1700000000000:0123456789abcdef\nmode=w\nlimit=0\nsession=30000\n"
                    .getBytes(StandardCharsets.UTF_8);
    private static final byte[] SMALL_DATA = "127.0.0.1".getBytes(StandardCharsets.UTF_8);

    private final ZooKeeper zk;
    private final ClientCnxn connection;

    private ZkRequestPaths(ZooKeeper zk) throws ReflectiveOperationException {
        this.zk = zk;
        Field f = ZooKeeper.class.getDeclaredField("cnxn");
        f.setAccessible(true);
        this.connection = (ClientCnxn) f.get(zk);
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        List<String> paths =
                Arrays.asList((args.length > 2 ? args[2] : "callback,nocallback,sequential,callback-small").split(","));
        try (TestingServer server = ZkSystems.server()) {
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(server.getConnectString(), 10_000, e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            try {
                if (!connected.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("no connection to " + server.getConnectString());
                }
                new ZkRequestPaths(zk).compare(rounds, seconds, new ArrayList<>(paths));
            } finally {
                zk.close();
            }
        }
    }

    private void compare(int rounds, int seconds, List<String> paths) throws Exception {
        for (int i = 0; i < THREADS; i++) {
            try {
                zk.create("/paths-" + i, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // made by an earlier run of the same server
            }
        }
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        Map<String, List<Double>> rates = new TreeMap<>();
        Map<String, List<Double>> cpu = new TreeMap<>();
        for (int r = 0; r <= rounds; r++) {
            boolean warmUp = r == 0;
            for (String path : paths) {
                int window = warmUp ? 1 : seconds;
                long cpuBefore = os.getProcessCpuTime();
                long cycles = run(path, window);
                double cpuPerCycle = (os.getProcessCpuTime() - cpuBefore) / 1000.0 / cycles;
                double rate = cycles / (double) window;
                if (!warmUp) {
                    rates.computeIfAbsent(path, k -> new ArrayList<>()).add(rate);
                    cpu.computeIfAbsent(path, k -> new ArrayList<>()).add(cpuPerCycle);
                }
                System.out.printf("round %d %-15s %7.0f cycles/s %7.1f us CPU per cycle%n", r, path, rate, cpuPerCycle);
            }
            Collections.rotate(paths, 1);
        }
        System.out.println("| path | cycles/s, median | JVM CPU per cycle, median |");
        System.out.println("|---|---:|---:|");
        for (String path : rates.keySet()) {
            System.out.printf("| %s | %.0f | %.1f us |%n", path, median(rates.get(path)), median(cpu.get(path)));
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    private long run(String path, int seconds) throws InterruptedException {
        AtomicLong cycles = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        Thread[] threads = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            String parent = "/paths-" + i;
            threads[i] = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        cycle(path, parent);
                        cycles.incrementAndGet();
                    }
                } catch (Exception e) {
                    failures.add(e);
                }
            });
            threads[i].start();
        }
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds)); // the measurement window, not a wait for an outcome
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException("path " + path + " failed", failures.get(0));
        }
        return cycles.get();
    }

    private void cycle(String path, String parent) throws Exception {
        String prefix = parent + "/w-" + UUID.randomUUID() + "-";
        String node;
        switch (path) {
            case "callback", "callback-small" -> {
                byte[] data = path.equals("callback") ? INTERLOCK_DATA : SMALL_DATA;
                CompletableFuture<String> created = new CompletableFuture<>();
                zk.create(
                        prefix,
                        data,
                        ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL_SEQUENTIAL,
                        (rc, p, ctx, name, stat) -> created.complete(name),
                        null);
                zk.getChildren(parent, false);
                node = created.join();
            }
            case "nocallback" -> {
                RequestHeader header = new RequestHeader();
                header.setType(ZooDefs.OpCode.create2);
                CreateRequest request = new CreateRequest(
                        prefix, INTERLOCK_DATA, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL.toFlag());
                Create2Response response = new Create2Response();
                ReplyHeader reply = new ReplyHeader();
                connection.queuePacket(header, reply, request, response, null, prefix, prefix, null, null);
                // One session's answers come in order: the create's is read before the listing's returns.
                zk.getChildren(parent, false);
                if (reply.getErr() != 0) {
                    throw KeeperException.create(KeeperException.Code.get(reply.getErr()), prefix);
                }
                node = response.getPath();
            }
            case "sequential" -> {
                node = zk.create(
                        prefix,
                        INTERLOCK_DATA,
                        ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.EPHEMERAL_SEQUENTIAL,
                        new Stat());
                zk.getChildren(parent, false);
            }
            default ->
                throw new IllegalArgumentException(
                        "unknown path '" + path + "'; known: callback, nocallback, sequential, callback-small");
        }
        zk.delete(node, -1);
    }
}
