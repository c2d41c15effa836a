package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The session-loss rule against a real server whose tick is 250ms (sessions of 5s: the client waits up to 1s
 * before it connects again after a reset), the holder
 * reaching it through a proxy of the test's own: a holder cut off is told before its session can
 * expire and before anyone else is granted; one whose connections reset and come back in time
 * keeps its lock; one whose clock jumps past the loss point (a paused process) learns it lost.
 */
class ZkSessionLossIT {
    private static TestingServer server;
    private TcpProxy proxy;
    private final String path = TestZk.newPath();
    private final List<LockSpace> spaces = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startServer() throws Exception {
        server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, 250, -1), true);
    }

    @AfterAll
    static void stopServer() throws Exception {
        server.close();
    }

    @BeforeEach
    void startProxy() throws Exception {
        proxy = new TcpProxy(server.getPort());
    }

    @AfterEach
    void close() throws Exception {
        for (LockSpace s : spaces) {
            s.close();
        }
        proxy.close();
    }

    private LockSpace viaProxy(FakeTicker ticker) {
        String uri = "zk://127.0.0.1:" + proxy.port() + path + "?session=5s&connect=5s";
        LockSpace s = ticker == null
                ? Interlock.open(uri)
                : Interlock.builder(uri).ticker(ticker).open();
        spaces.add(s);
        return s;
    }

    private LockSpace direct() {
        LockSpace s = Interlock.open("zk://" + server.getConnectString() + path + "?session=5s");
        spaces.add(s);
        return s;
    }

    private static ZkLockBackend backend(LockSpace s) {
        return (ZkLockBackend) Spaces.backend(s);
    }

    @Test
    void holderCutOff_isToldBeforeItsSessionCanExpire_andBeforeAnyoneElseIsGranted() throws Exception {
        LockSpace holder = viaProxy(null);
        Lease lease = holder.tryAcquire("cut").orElseThrow();
        assertThat(backend(holder).sessionTimeout()).isEqualTo(Duration.ofSeconds(5));
        AtomicLong toldAt = new AtomicLong();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        lease.onLost(e -> {
            toldAt.compareAndSet(0, System.nanoTime());
            told.add(e);
        });
        LockSpace other = direct();
        CompletableFuture<Long> grantedAt = CompletableFuture.supplyAsync(() -> {
            try (Lease next = other.acquire("cut", Duration.ofSeconds(30))) {
                return System.nanoTime();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        long cutAt = System.nanoTime();
        proxy.blackhole();
        long granted = grantedAt.get(30, TimeUnit.SECONDS);
        assertThat(told)
                .singleElement()
                .satisfies(e -> assertThat(e).hasMessageContaining("no answer from the ZooKeeper ensemble"));
        assertThat(toldAt.get())
                .as("the holder was told before the next holder was granted")
                .isLessThan(granted);
        assertThat(lease.isValid()).isFalse();
        // The session expires 5s (to 5s + a tick) after the last request the server received; the holder
        // is told at most 2/3 + 1/15 of that after the last confirmed heartbeat, so 4/15 of 5s (1.33s) at least
        // goes between the two.
        assertThat(TimeUnit.NANOSECONDS.toMillis(granted - toldAt.get()))
                .as("ms between told and the next grant")
                .isGreaterThan(1000);
        assertThat(TimeUnit.NANOSECONDS.toMillis(toldAt.get() - cutAt))
                .as("ms from the cut to told")
                .isLessThan(5000);
        lease.close();
    }

    @Test
    void connectionsReset_andBackInTime_keepTheLock() throws Exception {
        LockSpace holder = viaProxy(null);
        Lease lease = holder.tryAcquire("kept").orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        lease.onLost(told::add);
        ZkSession before = backend(holder).keeper.currentIfLive();
        long resetAt = System.nanoTime();
        proxy.dropConnections();
        // Kept: the session answers again (a heartbeat sent after the reset came back).
        await().atMost(Duration.ofSeconds(10))
                .until(() -> before.deadline.silenceNanos(System.nanoTime()) < System.nanoTime() - resetAt);
        assertThat(backend(holder).keeper.currentIfLive()).isSameAs(before);
        assertThat(told).isEmpty();
        assertThat(lease.isValid()).isTrue();
        lease.renew();
        assertThat(direct().tryAcquire("kept")).isEmpty();
        lease.close();
        direct().tryAcquire("kept").orElseThrow().close();
    }

    /**
     * A process paused past its session timeout (SIGSTOP, a long GC) wakes up with its clock far
     * ahead: the first look of the session keeper ends the session and tells the holder, whatever
     * the ZooKeeper client has noticed. Fake time for the holder; nothing reaches the server.
     */
    @Test
    void clockPastTheLossPoint_endsTheSession_theHolderIsTold_andItNeverHoldsAgain() throws Exception {
        FakeTicker ticker = new FakeTicker();
        LockSpace holder = viaProxy(ticker);
        Lease lease = holder.tryAcquire("paused").orElseThrow();
        List<LockLostException> told = new CopyOnWriteArrayList<>();
        lease.onLost(told::add);
        proxy.blackhole(); // no heartbeat can be confirmed: only the fake clock moves the rule
        SessionKeeper keeper = backend(holder).keeper;
        ZkSession s = keeper.currentIfLive();
        long toLoss = s.deadline.lossPoint() - ticker.read();
        assertThat(Duration.ofNanos(toLoss)).isLessThanOrEqualTo(Duration.ofMillis(3334));
        ticker.advance(Duration.ofNanos(toLoss - 1));
        keeper.keep();
        assertThat(told).isEmpty();
        assertThat(lease.isValid()).isTrue();
        ticker.advance(Duration.ofNanos(1));
        keeper.keep();
        await().atMost(Duration.ofSeconds(5)).until(() -> told.size() == 1);
        assertThat(lease.isValid()).isFalse();
        assertThat(s.ended()).isTrue();
        assertThatThrownBy(lease::renew).isInstanceOf(LockLostException.class);
        lease.close();
        proxy.restore();
        // A new session, a new place: the token keeps increasing.
        try (Lease again = holder.acquire("paused", Duration.ofSeconds(10))) {
            assertThat(again.token()).isGreaterThan(lease.token());
            assertThat(keeper.currentIfLive()).isNotSameAs(s);
        }
    }
}
