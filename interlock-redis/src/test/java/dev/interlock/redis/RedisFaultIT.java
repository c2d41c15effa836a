package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.testkit.Stacks;
import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.RedisClient;

/** Bad input and faults: credentials, unreachable and hung servers, restarts, killed connections. */
class RedisFaultIT {
    private final String prefix = TestRedis.newPrefix();
    private final List<AutoCloseable> open = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "redis-fault-it");
        t.setDaemon(true);
        return t;
    });

    private <T extends AutoCloseable> T closeLater(T c) {
        open.add(0, c);
        return c;
    }

    @AfterEach
    void closeAll() throws Exception {
        pool.shutdownNow();
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    @Test
    void wrongOrMissingPassword_isAClearError_thatNeverShowsThePassword() {
        TestRedis redis = closeLater(TestRedis.privateServer("requirepass Hunter2pw"));
        String at = "127.0.0.1:" + redis.port() + "/0?prefix=" + prefix;
        assertThatThrownBy(() -> Interlock.open("redis://:Wr0ngpw@" + at))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("authentication failed")
                .hasMessageContaining("redis://****@127.0.0.1:" + redis.port())
                .hasMessageNotContaining("Wr0ngpw")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isFalse());
        assertThatThrownBy(() -> Interlock.open("redis://" + at))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("requires a password");
        try (LockSpace locks = Interlock.open("redis://:Hunter2pw@" + at)) {
            assertThat(locks.uri()).doesNotContain("Hunter2pw").contains("****@");
            locks.tryAcquire("job").orElseThrow().close();
        }
    }

    /** Issue 25: a password for a server that has none is refused at open (docs/redis.md: exit 69), never ignored. */
    @Test
    void passwordForAServerWithoutOne_isRefused_sayingToRemoveIt() {
        TestRedis redis = closeLater(TestRedis.privateServer());
        String at = "127.0.0.1:" + redis.port() + "/0?prefix=" + prefix;
        assertThatThrownBy(() -> Interlock.open("redis://:Sp4repw@" + at))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("has none configured")
                .hasMessageContaining("remove it")
                .hasMessageNotContaining("Sp4repw")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isFalse());
    }

    @Test
    void unreachableServer_isATransientBackendError_atOpen() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        long start = System.nanoTime();
        assertThatThrownBy(() -> Interlock.open("redis://127.0.0.1:" + port + "?timeout=500ms"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("cannot reach the Redis server: connection refused")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isTrue());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Timing.seconds(5));
    }

    @Test
    void tlsToAPlainServer_saysSo() {
        TestRedis redis = TestRedis.shared();
        String plain = redis.uri(prefix, "timeout=1s");
        assertThatThrownBy(() -> Interlock.open(plain.replaceFirst("^redis://", "rediss://")))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("TLS")
                .hasMessageContaining("redis://");
    }

    @Test
    void serverDownUnderAHeldLease_theHolderIsToldBeforeTheLeaseRunsOut_andTokensGoOnAfterARestart() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        LockSpace locks = closeLater(Interlock.open(redis.uri(prefix, "timeout=300ms")));
        long lease = 1500;
        AtomicLong lostAt = new AtomicLong();
        long start = System.nanoTime();
        Lease l = locks.lock("outage")
                .lease(Duration.ofMillis(lease))
                .onLost(e -> lostAt.set(System.nanoTime()))
                .tryAcquire()
                .orElseThrow();
        redis.stop();
        await().atMost(Timing.seconds(10)).until(() -> lostAt.get() != 0);
        assertThat(Duration.ofNanos(lostAt.get() - start))
                .as("told before the lease ran out")
                .isLessThan(Duration.ofMillis(lease));
        assertThat(l.isValid()).isFalse();
        redis.restart(); // without persistence: the lock and its fence counter are gone
        try (Lease again = locks.tryAcquire("outage").orElseThrow()) {
            assertThat(again.token()).as("tokens never go back").isGreaterThan(l.token());
        }
    }

    @Test
    void serverRestartedWithoutItsData_underAHeldLease_theNextRenewalSaysLost() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        LockSpace locks = closeLater(Interlock.open(redis.uri(prefix, "")));
        Lease l =
                locks.lock("restart").lease(Duration.ofSeconds(30)).tryAcquire().orElseThrow();
        redis.stop();
        redis.restart();
        // The pooled connections died with the server: the renewal gets a fresh one and the truth.
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("no longer has it");
        assertThat(l.isValid()).isFalse();
    }

    @Test
    void killedConnections_renewalReconnects_andWaitersResubscribe() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        RedisClient admin = closeLater(redis.admin());
        LockSpace locks = closeLater(Interlock.open(redis.uri(prefix, "")));
        LockSpace waiting = closeLater(Interlock.open(redis.uri(prefix, "poll=10m")));
        Lease held = locks.tryAcquire("killed").orElseThrow();
        Future<Lease> waiter = pool.submit(() -> waiting.acquire("killed", Timing.seconds(60)));
        String channel = new RedisKeys(prefix).channel("killed");
        await().atMost(Timing.seconds(10)).until(() -> subscribers(admin, channel) == 1L);

        admin.sendCommand(Protocol.Command.CLIENT, "KILL", "TYPE", "normal", "SKIPME", "yes");
        admin.sendCommand(Protocol.Command.CLIENT, "KILL", "TYPE", "pubsub");
        held.renew(); // no error: a connection killed under the pool is replaced at once
        assertThat(held.isValid()).isTrue();
        await().atMost(Timing.seconds(10)).until(() -> subscribers(admin, channel) == 1L);
        held.close();
        waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void hungServer_cannotHangARenewal_theHolderIsToldBeforeTheLeaseRunsOut() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        long pid = pid(redis);
        LockSpace locks = closeLater(Interlock.open(redis.uri(prefix, "timeout=200ms")));
        long lease = 1500;
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        AtomicLong lostAt = new AtomicLong();
        long start = System.nanoTime();
        Lease l = locks.lock("hung")
                .lease(Duration.ofMillis(lease))
                .onLost(e -> {
                    lostAt.set(System.nanoTime());
                    lost.set(e);
                })
                .tryAcquire()
                .orElseThrow();
        signal("-STOP", pid);
        try {
            await().atMost(Timing.seconds(10)).until(() -> lostAt.get() != 0);
        } finally {
            signal("-CONT", pid);
        }
        assertThat(Duration.ofNanos(lostAt.get() - start)).isLessThan(Duration.ofMillis(lease));
        assertThat(lost.get()).hasMessageContaining("lost 'hung'");
        assertThat(l.isValid()).isFalse();
    }

    /**
     * Issue 25: a waiter that gives up while the server is paused leaves its place in the queue,
     * and a try the server runs at the resume, behind; nobody uses them, and the next waiter used
     * to wait them out (a place for 5 s, a grant for a whole lease).
     */
    @Test
    void serverPausedUnderAWaiterThatGivesUp_itLeavesNothing_theNextAcquireIsGrantedAtTheResume() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        long pid = pid(redis);
        LockSpace holder = closeLater(Interlock.open(redis.uri(prefix, "")));
        LockSpace giving = closeLater(Interlock.open(redis.uri(prefix, "timeout=200ms&poll=50ms")));
        LockSpace next = closeLater(Interlock.open(redis.uri(prefix, "")));
        Lease held =
                holder.lock("ghost").lease(Duration.ofSeconds(30)).tryAcquire().orElseThrow();
        Future<Lease> givesUp = pool.submit(
                () -> giving.lock("ghost").lease(Duration.ofSeconds(30)).acquire(Duration.ofMillis(1500)));
        await().atMost(Timing.seconds(10)).until(() -> holder.status("ghost").waiters() == 1);
        // Its tries get no answer while the server is stopped; it gives up.
        long resumedAt = pausedUntil(pid, givesUp::isDone);
        assertThatThrownBy(givesUp::get)
                .as("the waiter got no lease")
                .hasCauseInstanceOf(dev.interlock.LockException.class);
        held.close();
        assertGrantedSoonAfter(next, "ghost", resumedAt);
    }

    /**
     * Issue 25: the holder's lease runs out on the server while it is paused; the try of a waiter
     * that gave up meanwhile, run at the resume, must not be granted to nobody.
     */
    @Test
    void serverPausedPastTheHoldersLease_theTryOfAWaiterThatGaveUpGrantsNothing() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        long pid = pid(redis);
        RedisClient admin = closeLater(redis.admin());
        RedisLockStore elsewhere = new RedisLockStore(admin, new RedisKeys(prefix), "test", () -> {});
        LockSpace giving = closeLater(Interlock.open(redis.uri(prefix, "timeout=200ms&poll=50ms")));
        LockSpace next = closeLater(Interlock.open(redis.uri(prefix, "")));
        long lease = 1000;
        long grantedAt = System.nanoTime();
        assertThat(elsewhere
                        .acquire("ghost", dev.interlock.Mode.EXCLUSIVE, "elsewhere:1:2:x", lease, false, lease)
                        .granted())
                .isTrue();
        Future<Lease> givesUp = pool.submit(
                () -> giving.lock("ghost").lease(Duration.ofSeconds(30)).acquire(Duration.ofMillis(1500)));
        await().atMost(Timing.seconds(10)).until(() -> next.status("ghost").waiters() == 1);
        // The server's clock goes on while it is stopped: once the lease has run out there, the
        // try it runs at the resume finds the lock free.
        long resumedAt = pausedUntil(
                pid,
                () -> givesUp.isDone() && System.nanoTime() - grantedAt > TimeUnit.MILLISECONDS.toNanos(lease + 200));
        assertThatThrownBy(givesUp::get)
                .as("the waiter got no lease")
                .hasCauseInstanceOf(dev.interlock.LockException.class);
        assertGrantedSoonAfter(next, "ghost", resumedAt);
    }

    /** Stops the server until {@code until} holds, then continues it; returns when it did (System.nanoTime). */
    private static long pausedUntil(long pid, java.util.concurrent.Callable<Boolean> until) throws Exception {
        signal("-STOP", pid);
        try {
            await().atMost(Timing.seconds(10)).until(until);
        } finally {
            signal("-CONT", pid);
        }
        return System.nanoTime();
    }

    /** The next acquire is granted within a second of the resume: nothing left behind holds it up. */
    private static void assertGrantedSoonAfter(LockSpace space, String name, long resumedAt)
            throws InterruptedException {
        try (Lease l = space.acquire(name, Timing.seconds(20))) {
            assertThat(Duration.ofNanos(System.nanoTime() - resumedAt))
                    .as("granted soon after the resume")
                    .isLessThan(Duration.ofSeconds(1));
        }
    }

    /**
     * Issue 25: a grant that reaches the caller after a pause longer than its lease (as this
     * process counts it) was returned already lost. It must be given back and the wait go on.
     * The pause is seen through the space's ticker, which jumps while the try is held up on the
     * stopped server; the server's own lease is fresh when it answers.
     */
    @Test
    void grantThatArrivesTooLate_isGivenBack_andAcquireReturnsALiveLease() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        long pid = pid(redis);
        AtomicLong jump = new AtomicLong();
        LockSpace locks = closeLater(Interlock.builder(redis.uri(prefix, ""))
                .ticker(() -> System.nanoTime() + jump.get())
                .open());
        Duration lease = Duration.ofSeconds(2);
        AtomicReference<Thread> acquiring = new AtomicReference<>();
        Future<Lease> acquired;
        signal("-STOP", pid);
        try {
            acquired = pool.submit(() -> {
                acquiring.set(Thread.currentThread());
                return locks.lock("late").lease(lease).acquire(Timing.seconds(30));
            });
            await().atMost(Timing.seconds(10))
                    .until(() -> Stacks.inCall(acquiring.get(), "dev.interlock.redis.RedisLockStore"));
            jump.addAndGet(2 * lease.toNanos());
        } finally {
            signal("-CONT", pid);
        }
        try (Lease l = acquired.get(20, TimeUnit.SECONDS)) {
            assertThat(l.isValid()).as("a live lease, not one already lost").isTrue();
            assertThat(l.validUntil()).isAfter(java.time.Instant.now());
        }
        assertThat(locks.status("late").holders())
                .as("the late grant was given back")
                .isEmpty();
    }

    /**
     * Issue 25: a waiting acquire gave up with a backend error at the first try that got no
     * answer while the server was paused; a wait must ride out a fault shorter than itself.
     */
    @Test
    void serverPausedLongerThanTheTimeout_aWaitingAcquireRidesItOut_andGetsTheLockOnceReleased() throws Exception {
        TestRedis redis = closeLater(TestRedis.privateServer());
        long pid = pid(redis);
        LockSpace holder = closeLater(Interlock.open(redis.uri(prefix, "")));
        LockSpace waiting = closeLater(Interlock.open(redis.uri(prefix, "timeout=200ms&poll=50ms")));
        Lease held =
                holder.lock("blip").lease(Duration.ofSeconds(30)).tryAcquire().orElseThrow();
        AtomicReference<Thread> acquiring = new AtomicReference<>();
        Future<Lease> waiter = pool.submit(() -> {
            acquiring.set(Thread.currentThread());
            return waiting.acquire("blip", Timing.seconds(60));
        });
        await().atMost(Timing.seconds(10)).until(() -> holder.status("blip").waiters() == 1);
        // Its tries fail (no answer within 200ms): it waits on through them, or gives up.
        pausedUntil(pid, () -> waiter.isDone() || Stacks.inCall(acquiring.get(), "dev.interlock.internal.WaitFaults"));
        held.close();
        try (Lease l = waiter.get(20, TimeUnit.SECONDS)) {
            assertThat(l.isValid()).isTrue();
        }
    }

    private static long pid(TestRedis redis) {
        try (RedisClient admin = redis.admin()) {
            Matcher m = Pattern.compile("process_id:(\\d+)").matcher(admin.info("server"));
            assertThat(m.find()).isTrue();
            return Long.parseLong(m.group(1));
        }
    }

    private static long subscribers(RedisClient admin, String channel) {
        List<?> r = (List<?>) admin.sendCommand(Protocol.Command.PUBSUB, "NUMSUB", channel);
        return (Long) r.get(1);
    }

    /** Stops or continues the Redis server this test started (by its pid, never by name). */
    private static void signal(String sig, long pid) throws Exception {
        Process p =
                new ProcessBuilder("kill", sig, Long.toString(pid)).inheritIO().start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
    }
}
