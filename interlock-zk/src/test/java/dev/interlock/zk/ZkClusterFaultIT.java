package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.check.CheckWorker;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Faults of a three-server ensemble while the multi-process checker runs (worker JVMs contending
 * for one name), and a holder in this JVM whose fate each test states: a server killed under it
 * (its client moves, the lock is kept), the leader killed (a new one is elected, the lock is
 * kept), two of three killed (no quorum: it is told before its session could expire, and nobody is
 * granted before that).
 */
class ZkClusterFaultIT {
    /** The default session: on this 2-core machine, loaded, a killed server's clients took over 4s to be answered again. */
    private static final String SESSION = "?session=10s&connect=10s";

    private static TestingCluster cluster;
    private final String path = TestZk.newPath();
    private final List<LockSpace> spaces = new CopyOnWriteArrayList<>();
    private final List<InstanceSpec> killed = new ArrayList<>();

    @TempDir
    Path tmp;

    @BeforeAll
    static void startCluster() throws Exception {
        System.setProperty("zookeeper.4lw.commands.whitelist", "srvr");
        // Three servers share this machine's disk with the worker JVMs: an fsync per commit made a
        // sync wait seconds while the workers started, and the holder rightly gave its lock up.
        System.setProperty("zookeeper.forceSync", "no");
        cluster = new TestingCluster(3);
        cluster.start();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    @AfterEach
    void restore() throws Exception {
        for (LockSpace s : spaces) {
            s.close();
        }
        for (InstanceSpec i : killed) {
            cluster.restartServer(i);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> leader() != null);
    }

    private String uri() {
        return "zk://" + cluster.getConnectString() + path + SESSION;
    }

    private LockSpace space() {
        LockSpace s = Interlock.open(uri());
        spaces.add(s);
        return s;
    }

    private static ZkSession session(LockSpace s) {
        return ((ZkLockBackend) Spaces.backend(s)).keeper.currentIfLive();
    }

    private void kill(InstanceSpec i) throws Exception {
        killed.add(i);
        assertThat(cluster.killServer(i)).isTrue();
    }

    /** The server that leads now, asked with the 'srvr' word; null while none does. */
    private static InstanceSpec leader() {
        for (InstanceSpec i : cluster.getInstances()) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), i.getPort())) {
                s.setSoTimeout(2000);
                OutputStream out = s.getOutputStream();
                out.write("srvr".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
                if (answer.contains("Mode: leader")) {
                    return i;
                }
            } catch (Exception e) {
                // down, or not serving
            }
        }
        return null;
    }

    /** Runs the checker in the background: 3 worker JVMs, mixed modes, on name "counter". */
    private CompletableFuture<ExclusionChecker.Report> checker(int iterations) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return MultiProcessChecker.run(uri(), "counter", "mixed", 3, iterations, tmp);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** Waits until the workers have made {@code n} exclusive sections. */
    private void workersBusy(long n) {
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            try {
                return CheckWorker.read(tmp.resolve("counter")) >= n;
            } catch (Exception e) {
                return false;
            }
        });
    }

    /** A holder in this JVM and what it was told. */
    private record Holder(LockSpace space, Lease lease, List<LockLostException> told, AtomicLong toldAt) {}

    private Holder holder(String name) {
        LockSpace s = space();
        Lease l = s.tryAcquire(name).orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        AtomicLong at = new AtomicLong();
        l.onLost(e -> {
            at.compareAndSet(0, System.nanoTime());
            told.add(e);
        });
        return new Holder(s, l, told, at);
    }

    /** The holder's session answers again: a heartbeat sent after {@code since} came back. */
    private static void answersAgain(Holder h, long since) {
        ZkSession s = session(h.space());
        await().atMost(Duration.ofSeconds(30))
                .until(() -> s.deadline.silenceNanos(System.nanoTime()) < System.nanoTime() - since);
        assertThat(session(h.space())).isSameAs(s);
    }

    @Test
    void holdersServerKilled_clientMoves_lockKept_checkerClean() throws Exception {
        CompletableFuture<ExclusionChecker.Report> check = checker(300);
        Holder h = holder("kept");
        ZkSession before = session(h.space());
        workersBusy(20);
        long at = System.nanoTime();
        kill(cluster.findConnectionInstance(before.zk));
        answersAgain(h, at);
        assertThat(h.told()).isEmpty();
        assertThat(h.lease().isValid()).isTrue();
        h.lease().renew();
        assertThat(space().tryAcquire("kept")).isEmpty();
        ExclusionChecker.Report r = check.get(120, TimeUnit.SECONDS);
        assertThat(r.sections()).isEqualTo(900);
        h.lease().close();
    }

    @Test
    void leaderKilled_newLeaderElected_lockKept_checkerClean() throws Exception {
        CompletableFuture<ExclusionChecker.Report> check = checker(300);
        Holder h = holder("kept");
        workersBusy(20);
        InstanceSpec leader = leader();
        assertThat(leader).isNotNull();
        long at = System.nanoTime();
        kill(leader);
        await().atMost(Duration.ofSeconds(30)).until(() -> leader() != null);
        answersAgain(h, at);
        assertThat(h.told()).isEmpty();
        assertThat(h.lease().isValid()).isTrue();
        assertThat(space().tryAcquire("kept")).isEmpty();
        long lastToken = h.lease().token();
        h.lease().close();
        try (Lease next = space().tryAcquire("kept").orElseThrow()) {
            assertThat(next.token())
                    .as("a token of the new leader's epoch is larger")
                    .isGreaterThan(lastToken);
        }
        ExclusionChecker.Report r = check.get(120, TimeUnit.SECONDS);
        assertThat(r.sections()).isEqualTo(900);
    }

    @Test
    void twoOfThreeKilled_noQuorum_holderToldBeforeItsSessionCouldExpire_nobodyGrantedMeanwhile() throws Exception {
        CompletableFuture<ExclusionChecker.Report> check = checker(200);
        Holder h = holder("quorum");
        LockSpace other = space();
        CompletableFuture<Long> grantedAt = CompletableFuture.supplyAsync(() -> {
            try (Lease next = other.acquire("quorum", Duration.ofSeconds(90))) {
                return System.nanoTime();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        workersBusy(20);
        long at = System.nanoTime();
        List<InstanceSpec> all = new ArrayList<>(cluster.getInstances());
        kill(all.get(0));
        kill(all.get(1));
        await().atMost(Duration.ofSeconds(30)).until(() -> !h.told().isEmpty());
        long toldMs = TimeUnit.NANOSECONDS.toMillis(h.toldAt().get() - at);
        assertThat(toldMs)
                .as("ms from losing the quorum to told (session 10s: at most 2/3 + 1/15 of it after the last answer)")
                .isLessThan(10_000);
        assertThat(h.told().get(0)).hasMessageContaining("no answer from the ZooKeeper ensemble");
        assertThat(h.lease().isValid()).isFalse();
        assertThat(grantedAt).as("nobody is granted without a quorum").isNotDone();
        for (InstanceSpec i : List.copyOf(killed)) {
            cluster.restartServer(i);
        }
        killed.clear();
        long granted = grantedAt.get(90, TimeUnit.SECONDS);
        assertThat(h.toldAt().get()).isLessThan(granted);
        h.lease().close();
        ExclusionChecker.Report r = check.get(120, TimeUnit.SECONDS);
        assertThat(r.sections()).isEqualTo(600);
    }
}
