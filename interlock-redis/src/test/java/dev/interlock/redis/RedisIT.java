package dev.interlock.redis;

import static dev.interlock.redis.TestRedis.queuedFields;
import static dev.interlock.redis.TestRedis.scriptsRun;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.HolderInfo;
import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

/** What is particular to the redis: backend, on the shared test server. */
class RedisIT {
    private final TestRedis redis = TestRedis.shared();
    private final String prefix = TestRedis.newPrefix();
    private final RedisKeys keys = new RedisKeys(prefix);
    private final List<AutoCloseable> open = new ArrayList<>();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "redis-it");
        t.setDaemon(true);
        return t;
    });

    private LockSpace space(String options) {
        LockSpace s = Interlock.open(redis.uri(prefix, options));
        open.add(s);
        return s;
    }

    private RedisClient admin() {
        RedisClient c = redis.admin();
        open.add(c);
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
    void keyOfTheWrongType_atTheLock_isAClearError_andNothingIsGranted() {
        LockSpace locks = space("");
        RedisClient admin = admin();
        admin.set(keys.lock("job"), "someone else's value");
        assertThatThrownBy(() -> locks.tryAcquire("job"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("'job'")
                .hasMessageContaining("the key '" + keys.lock("job") + "' holds a Redis string")
                .hasMessageContaining("Nothing was granted")
                .hasMessageContaining("prefix=")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isFalse());
        assertThatThrownBy(() -> locks.acquire("job", Mode.SHARED, Duration.ofMillis(50)))
                .isInstanceOf(LockBackendException.class);
        assertThatThrownBy(() -> locks.status("job"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("holds a Redis string");
        assertThat(admin.get(keys.lock("job"))).as("left alone").isEqualTo("someone else's value");
        assertThat(admin.exists(keys.fence("job"))).as("no token issued").isFalse();
        admin.del(keys.lock("job"));
        locks.tryAcquire("job").orElseThrow().close();
    }

    @Test
    void keyOfTheWrongType_atTheFence_isAClearError_andNothingIsGranted() {
        LockSpace locks = space("");
        RedisClient admin = admin();
        admin.hset(keys.fence("job"), "a", "b");
        assertThatThrownBy(() -> locks.tryAcquire("job"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("holds a Redis hash");
        assertThat(admin.exists(keys.lock("job"))).isFalse();
        admin.del(keys.fence("job"));
        admin.set(keys.fence("job"), "not a number");
        assertThatThrownBy(() -> locks.tryAcquire("job"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("did not write");
        assertThat(admin.exists(keys.lock("job"))).isFalse();
    }

    @Test
    void tamperedLockHash_isAClearError() {
        LockSpace locks = space("");
        admin().hset(keys.lock("job"), "h:x", "garbage");
        assertThatThrownBy(() -> locks.tryAcquire("job"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("holds entries Interlock did not write");
    }

    @Test
    void anUncontendedCycle_isTwoScriptCalls_thatTakeTheShortPaths() {
        // A server of its own: INFO commandstats counts every client's commands.
        TestRedis own = TestRedis.privateServer();
        LockSpace locks = Interlock.open(own.uri(prefix, ""));
        RedisClient admin = own.admin();
        open.addAll(List.of(locks, admin, own)); // closed in this order, the server last
        Lease first = locks.tryAcquire("cycle").orElseThrow(); // scripts loaded
        RedisLockBackend backend = (RedisLockBackend) Spaces.backend(locks);
        String channel = keys.lostChannel(first.owner().id());
        await().atMost(Timing.seconds(10))
                .until(() -> backend.wakeups.subscribed(channel)); // the subscriber's connection is up
        first.close();
        Map<String, Long> before = commandCalls(admin);
        int cycles = 50;
        for (int i = 0; i < cycles; i++) {
            locks.tryAcquire("cycle").orElseThrow().close();
        }
        Map<String, Long> calls = commandCalls(admin);
        calls.replaceAll((command, n) -> n - before.getOrDefault(command, 0L));
        calls.values().removeIf(n -> n == 0);
        calls.remove("info");
        // Per cycle: the acquire script (TIME, EXISTS, GET, SET, HSET, PEXPIRE) and the release
        // script (TIME, HGET, HLEN, DEL); no SUBSCRIBE, no HGETALL of the whole hash.
        assertThat(calls)
                .as("commands run by %d cycles", cycles)
                .containsOnlyKeys("evalsha", "time", "exists", "get", "set", "hset", "pexpire", "hget", "hlen", "del")
                .containsEntry("evalsha", 2L * cycles);
    }

    /** Issue 25: the grant tells the core whether its owner-checked release freed anything, so a release that did not is never logged as one. */
    @Test
    void releaseIfOwned_ofAHolderWhoseLockRanOutAndPassedOn_answersFalse() throws Exception {
        LockSpace a = space("");
        LockSpace b = space("");
        RedisClient admin = admin();
        dev.interlock.spi.LockBackend backend = Spaces.backend(a);
        try (dev.interlock.spi.Attempt first = backend.attempt(spec("told"));
                dev.interlock.spi.Attempt second = backend.attempt(spec("told"))) {
            dev.interlock.spi.Grant old = first.tryAcquire().orElseThrow();
            admin.del(keys.lock("told")); // its lease ran out where Redis keeps it
            Lease next = b.tryAcquire("told").orElseThrow();
            assertThat(old.releaseIfOwned()).as("the old holder's release").isFalse();
            assertThat(a.tryAcquire("told")).as("the next holder keeps it").isEmpty();
            next.close();
            assertThat(second.tryAcquire().orElseThrow().releaseIfOwned())
                    .as("a holder's own release")
                    .isTrue();
        }
    }

    private static dev.interlock.spi.AcquireSpec spec(String name) {
        return dev.interlock.spi.AcquireSpec.builder(
                        name, dev.interlock.Mode.EXCLUSIVE, dev.interlock.Owner.newAcquisition())
                .lease(java.time.Duration.ofMinutes(10))
                .build();
    }

    private static final java.util.regex.Pattern CMDSTAT =
            java.util.regex.Pattern.compile("^cmdstat_([^:]+):calls=(\\d+),");

    /** Calls per command (lower case) since the server started, from INFO commandstats. */
    private static Map<String, Long> commandCalls(RedisClient admin) {
        Map<String, Long> calls = new java.util.HashMap<>();
        for (String line : admin.info("commandstats").split("\r?\n")) {
            java.util.regex.Matcher m = CMDSTAT.matcher(line);
            if (m.find()) {
                calls.put(m.group(1).toLowerCase(java.util.Locale.ROOT), Long.parseLong(m.group(2)));
            }
        }
        return calls;
    }

    @Test
    void release_ofTheOnlyEntry_removesItOnlyWhileItIsLiveAndOfThatToken() {
        // release.lua's short path (the owner's grant is the whole hash) must judge as the full one.
        LockSpace locks = space("");
        RedisLockBackend backend = (RedisLockBackend) Spaces.backend(locks);
        RedisClient admin = admin();
        Lease l = locks.tryAcquire("solo").orElseThrow();
        String key = keys.lock("solo");
        String field = "h:" + l.owner().id();
        assertThat(backend.store.release("solo", l.owner().id(), l.token() + 1))
                .as("another token")
                .isFalse();
        assertThat(backend.store.release("solo", "someone-else", l.token()))
                .as("another owner")
                .isFalse();
        assertThat(admin.hexists(key, field)).isTrue();
        // The grant's deadline has passed on the server, the hash still lives: not released, pruned.
        String[] v = admin.hget(key, field).split(" ");
        v[2] = "1";
        admin.hset(key, field, String.join(" ", v));
        admin.pexpire(key, 60_000);
        assertThat(backend.store.release("solo", l.owner().id(), l.token()))
                .as("a grant whose lease ran out")
                .isFalse();
        assertThat(admin.exists(key))
                .as("the dead entry pruned, the empty hash gone")
                .isFalse();
        Lease again = locks.tryAcquire("solo").orElseThrow();
        assertThat(backend.store.release("solo", again.owner().id(), again.token()))
                .isTrue();
        assertThat(admin.exists(key)).isFalse();
    }

    @Test
    void namesWithBracesSpacesAndFullLength_areDistinctLocks_inOneSlotEach_andListedBack() {
        LockSpace locks = space("");
        List<String> names = List.of(
                "{a}",
                "a}",
                "{a",
                "}{",
                "{}",
                "%7B",
                "%",
                "a b",
                " ",
                "a",
                "{" + "}".repeat(1022) + "{",
                "é".repeat(1024));
        List<Lease> held = new ArrayList<>();
        for (String n : names) {
            held.add(locks.tryAcquire(n).orElseThrow(() -> new AssertionError("'" + n + "' was held by another name")));
        }
        LockSpace other = space("");
        for (String n : names) {
            assertThat(other.tryAcquire(n)).as("'%s'", n).isEmpty();
            assertThat(other.status(n).holders()).hasSize(1);
        }
        assertThat(other.list()).extracting(LockInfo::name).containsExactlyInAnyOrderElementsOf(names);
        held.forEach(Lease::close);
        assertThat(other.list())
                .as("names stay listed: their fence counter stays")
                .hasSize(names.size())
                .allSatisfy(i -> assertThat(i.isFree()).isTrue());
    }

    @Test
    void token_neverGoesBack_whenTheLockKeyExpires_orEvenWhenTheCounterIsLost() {
        LockSpace locks = space("");
        RedisClient admin = admin();
        long first;
        try (Lease l = locks.tryAcquire("fenced").orElseThrow()) {
            first = l.token();
        }
        assertThat(admin.exists(keys.lock("fenced")))
                .as("a free lock leaves no hash")
                .isFalse();
        assertThat(admin.ttl(keys.fence("fenced"))).as("the counter has no TTL").isEqualTo(-1L);
        long second;
        try (Lease l = locks.tryAcquire("fenced").orElseThrow()) {
            second = l.token();
            admin.del(keys.lock("fenced")); // as if its lease ran out on the server
        }
        assertThat(second).isGreaterThan(first);
        admin.del(keys.fence("fenced")); // as if the server lost the counter (restart without persistence)
        try (Lease l = locks.tryAcquire("fenced").orElseThrow()) {
            assertThat(l.token()).isGreaterThan(second);
        }
    }

    /**
     * A reader's release and renewal read only its own entry (not the other readers': their cost
     * must not grow with the readers there), so they must never shorten the hash's TTL below, or
     * delete it under, readers they did not read.
     */
    @Test
    void readersLeftUnread_byAnotherReadersReleaseOrRenewal_keepTheirHoldAndTheHashTtl() {
        LockSpace locks = space("");
        RedisClient admin = admin();
        Lease longOne = locks.lock("readers")
                .mode(Mode.SHARED)
                .lease(Duration.ofMinutes(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        Lease shortOne = locks.lock("readers")
                .mode(Mode.SHARED)
                .lease(Duration.ofMinutes(1))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        shortOne.renew(Duration.ofSeconds(30));
        assertThat(admin.pttl(keys.lock("readers")))
                .as("renewal of the shorter kept the longer one's TTL")
                .isGreaterThan(300_000L);
        shortOne.close();
        assertThat(admin.pttl(keys.lock("readers")))
                .as("release of the other kept the longer one's TTL")
                .isGreaterThan(300_000L);
        assertThat(locks.status("readers").holders())
                .extracting(HolderInfo::token)
                .containsExactly(java.util.OptionalLong.of(longOne.token()));
        assertThat(locks.tryAcquire("readers"))
                .as("a writer still sees the reader")
                .isEmpty();
        longOne.close();
        assertThat(locks.tryAcquire("readers")).isPresent();
    }

    /** Dead readers a light load leaves unread are pruned by the next writer, which reads them all. */
    @Test
    void deadReaders_areIgnoredAndPrunedByAWriter() {
        LockSpace locks = space("");
        RedisClient admin = admin();
        Lease live = locks.lock("pruned")
                .mode(Mode.SHARED)
                .lease(Duration.ofMinutes(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        admin.hset(keys.lock("pruned"), "h:dead:1:1:x", "SH 1 1 1000 1"); // a reader whose deadline passed long ago
        Lease other = locks.lock("pruned")
                .mode(Mode.SHARED)
                .lease(Duration.ofMinutes(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        other.close();
        assertThat(admin.hexists(keys.lock("pruned"), "h:dead:1:1:x"))
                .as("left unread by readers")
                .isTrue();
        assertThat(locks.status("pruned").holders())
                .extracting(HolderInfo::token)
                .containsExactly(java.util.OptionalLong.of(live.token()));
        live.close();
        try (Lease w = locks.tryAcquire("pruned").orElseThrow()) {
            assertThat(admin.hexists(keys.lock("pruned"), "h:dead:1:1:x"))
                    .as("pruned by the writer")
                    .isFalse();
        }
    }

    @Test
    void leaseRunsOutOnTheServer_othersMayTakeTheLock_andTheHolderIsLost() throws Exception {
        LockSpace locks = space("");
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        Lease l = locks.lock("short")
                .lease(Duration.ofMillis(400))
                .fixedLease()
                .onLost(lost::set)
                .tryAcquire()
                .orElseThrow();
        LockSpace other = space("");
        Lease taken = other.acquire("short", Timing.seconds(10));
        assertThat(taken.token()).isGreaterThan(l.token());
        // The local deadline is measured from before the request, so it passed before the server's did.
        assertThat(l.isValid()).isFalse();
        await().atMost(Timing.seconds(10)).until(() -> lost.get() != null);
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class);
        taken.close();
    }

    @Test
    void renew_ofALockTakenOver_throwsLost_namingTheNewHolder_andItsLateReleaseFreesNothing() {
        LockSpace locks = space("");
        Lease a = locks.lock("taken").fixedLease().tryAcquire().orElseThrow();
        admin().del(keys.lock("taken")); // a's lease ran out on the server
        Lease b = space("").tryAcquire("taken").orElseThrow();
        assertThatThrownBy(a::renew)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("lost 'taken' (token " + a.token() + ")")
                .hasMessageContaining("now held EX by " + b.owner().id());
        a.close();
        assertThat(locks.status("taken").holders())
                .extracting(h -> h.ownerId().orElseThrow())
                .containsExactly(b.owner().id());
        Lease c = locks.lock("taken2").fixedLease().tryAcquire().orElseThrow();
        admin().del(keys.lock("taken2"));
        Lease d = space("").tryAcquire("taken2").orElseThrow();
        c.close(); // a late release: compare-and-delete leaves d's lock alone
        assertThat(locks.tryAcquire("taken2")).isEmpty();
        b.close();
        d.close();
    }

    @Test
    void breakLock_removesOnlyTheOwnerSeen_andTheHolderLearnsItIsLost() {
        LockSpace locks = space("");
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        Lease l = locks.lock("stuck").onLost(lost::set).tryAcquire().orElseThrow();
        LockSpace admin = space("");
        HolderInfo h = admin.status("stuck").holders().get(0);
        assertThat(admin.breakLock("stuck", "otherhost:1:2:abc")).isFalse();
        assertThat(admin.breakLock("stuck", h.ownerId().orElseThrow())).isTrue();
        assertThat(admin.breakLock("stuck", h.ownerId().orElseThrow())).isFalse();
        // Told by the server's notice or by this renewal, whichever comes first.
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class);
        await().atMost(Timing.seconds(10)).until(() -> lost.get() != null); // listeners run on a background thread
        admin.tryAcquire("stuck").orElseThrow().close();
    }

    @Test
    void aBrokenLock_isToldToItsHolderAtOnce_notAtItsNextRenewal() {
        LockSpace locks = space("");
        AtomicReference<LockLostException> lost = new AtomicReference<>();
        // A 5-minute lease renews only every 100s: being told within seconds proves the push.
        Lease l = locks.lock("pushed")
                .lease(Duration.ofMinutes(5))
                .onLost(lost::set)
                .tryAcquire()
                .orElseThrow();
        LockSpace admin = space("");
        RedisClient a = admin();
        String channel = keys.lostChannel(l.owner().id());
        // The holder subscribes to its loss channel asynchronously; break only once it listens.
        await().atMost(Timing.seconds(10))
                .until(() -> (Long) a.eval("return redis.call('PUBSUB', 'NUMSUB', ARGV[1])[2]", 0, channel) > 0);
        assertThat(admin.breakLock("pushed", l.owner().id())).isTrue();
        await().atMost(Timing.seconds(5)).until(() -> lost.get() != null);
        assertThat(lost.get()).hasMessageContaining("broken on the server");
        assertThat(l.isValid()).isFalse();
    }

    /**
     * The process's loss channel is subscribed at its first grant and stays subscribed after the
     * release: a lock taken and given back in a loop used to send a SUBSCRIBE and an UNSUBSCRIBE
     * per cycle (1 thread: about 1.2x the cycles/s without them, docs/benchmarks.md).
     */
    @Test
    void lossChannel_staysSubscribedBetweenHolds_noSubscribeChurnPerCycle() {
        LockSpace locks = space("");
        RedisLockBackend backend = (RedisLockBackend) Spaces.backend(locks);
        Lease first = locks.tryAcquire("loop").orElseThrow();
        String channel = keys.lostChannel(first.owner().id());
        await().atMost(Timing.seconds(10)).until(() -> backend.wakeups.subscribed(channel));
        first.close();
        assertThat(backend.wakeups.subscribed(channel))
                .as("still subscribed after the last holder left")
                .isTrue();
        long subscribes = backend.wakeups.subscribes.get();
        for (int i = 0; i < 20; i++) {
            locks.tryAcquire("loop").orElseThrow().close();
            assertThat(backend.wakeups.subscribed(channel)).isTrue();
        }
        assertThat(backend.wakeups.subscribes.get() - subscribes)
                .as("SUBSCRIBEs sent by the 20 holds that followed")
                .isZero();
    }

    @Test
    void status_showsLeaseToken_andQueuedWaitersInOrder() throws Exception {
        LockSpace locks = space("");
        try (Lease held = locks.lock("q")
                .mode(Mode.SHARED)
                .lease(Duration.ofSeconds(42))
                .tryAcquire()
                .orElseThrow()) {
            HolderInfo h = locks.status("q").holders().get(0);
            assertThat(h.lease()).contains(Duration.ofSeconds(42));
            assertThat(h.token()).hasValue(held.token());
            assertThat(h.validUntil().orElseThrow())
                    .isAfter(java.time.Instant.now().plusSeconds(30));
            assertThat(h.host()).contains(held.owner().host());
            Future<Lease> writer = pool.submit(() -> space("").acquire("q", Timing.seconds(30)));
            await().atMost(Timing.seconds(10))
                    .until(() -> locks.status("q").queued().size() == 1);
            LockInfo info = locks.status("q");
            assertThat(info.waiters()).isEqualTo(1);
            assertThat(info.queued().get(0).waiting()).isTrue();
            assertThat(info.queued().get(0).mode()).isEqualTo(Mode.EXCLUSIVE);
            held.close();
            writer.get(10, TimeUnit.SECONDS).close();
        }
        assertThat(locks.status("q").queued()).isEmpty();
    }

    @Test
    void waiter_isWokenByTheReleaseNotice_notByPolling() throws Exception {
        LockSpace holder = space("");
        LockSpace waiting = space("poll=10m");
        for (int i = 0; i < 3; i++) {
            Lease held = holder.tryAcquire("notice").orElseThrow();
            Future<Lease> waiter = pool.submit(() -> waiting.acquire("notice", Timing.seconds(60)));
            await().atMost(Timing.seconds(10))
                    .until(() -> holder.status("notice").waiters() == 1);
            long released = System.nanoTime();
            held.close();
            waiter.get(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS).close();
            // Without the notice the waiter would look again only to keep its place in the queue, after 1.67s.
            assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Timing.seconds(1));
        }
    }

    @Test
    void release_wakesOnlyTheWaiterWhoseTurnItIs_notEveryQueuedWaiter() throws Exception {
        // Four writers of one space queue behind a holder; each release should cost one try (the next
        // writer's), not one per waiter: with every waiter woken, the four handoffs took 4+3+2+1 tries.
        LockSpace waiting = space("poll=10m");
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        RedisLockStore.Acquired held = store.acquire("herd", Mode.EXCLUSIVE, "holder:1:2:x", 60_000, false, 5000);
        assertThat(held.granted()).isTrue();
        List<Future<Lease>> writers = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            writers.add(pool.submit(() -> {
                Lease l = waiting.acquire("herd", Timing.seconds(30));
                l.close(); // hands over to the next writer
                return l;
            }));
            int queued = i;
            await().atMost(Timing.seconds(10))
                    .until(() -> waiting.status("herd").waiters() == queued);
        }
        RedisClient admin = admin();
        long before = scriptsRun(admin);
        store.release("herd", "holder:1:2:x", held.token());
        for (Future<Lease> w : writers) {
            w.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }
        long scripts = scriptsRun(admin) - before;
        // 5 releases and 1 granted try: the first writer is woken by the store's release and tries;
        // each of the others is handed the lock by the release of the writer before it (same
        // space), without a try of its own. With every waiter woken it was 4+3+2+1 tries, with only
        // the next one woken and no hand-off 4. A waiter keeping its place every 1.67s may add one.
        assertThat(scripts).as("scripts run for 4 handoffs").isGreaterThanOrEqualTo(6);
        assertThat(scripts).as("scripts run for 4 handoffs").isLessThan(8);
    }

    @Test
    void waiter_queuesAtItsFirstTry_whenAnotherWaiterOfItsProcessKeepsTheChannelSubscribed() throws Exception {
        LockSpace waiting = space("poll=10m");
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        RedisLockStore.Acquired held = store.acquire("second", Mode.EXCLUSIVE, "holder:1:2:x", 60_000, false, 5000);
        assertThat(held.granted()).isTrue();
        RedisClient admin = admin();
        String lock = keys.lock("second");
        // The first waiter subscribes, then queues: an unqueued try, then a queued one.
        Future<Lease> first = pool.submit(() -> {
            Lease l = waiting.acquire("second", Timing.seconds(30));
            l.close();
            return l;
        });
        await().atMost(Timing.seconds(10)).until(() -> queuedFields(admin, lock) == 1);
        // The second finds the channel subscribed and queues at its first try: one script, not two.
        long before = scriptsRun(admin);
        Future<Lease> second = pool.submit(() -> waiting.acquire("second", Timing.seconds(30)));
        await().atMost(Timing.seconds(10)).until(() -> queuedFields(admin, lock) == 2);
        assertThat(scriptsRun(admin) - before)
                .as("scripts run until the second waiter was queued")
                .isEqualTo(1);
        store.release("second", "holder:1:2:x", held.token());
        first.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        second.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS).close();
        assertThat(admin.exists(lock)).as("nothing left queued").isFalse();
    }

    @Test
    void singleTry_isNeverQueued_evenWhenTheChannelIsSubscribed() throws Exception {
        LockSpace waiting = space("poll=10m");
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        RedisLockStore.Acquired held = store.acquire("single", Mode.EXCLUSIVE, "holder:1:2:x", 60_000, false, 5000);
        RedisClient admin = admin();
        String lock = keys.lock("single");
        Future<Lease> first = pool.submit(() -> waiting.acquire("single", Timing.seconds(30)));
        await().atMost(Timing.seconds(10)).until(() -> queuedFields(admin, lock) == 1);
        long before = scriptsRun(admin);
        assertThat(waiting.tryAcquire("single")).isEmpty();
        assertThat(scriptsRun(admin) - before)
                .as("a single try is one script, with nothing to leave")
                .isEqualTo(1);
        assertThat(queuedFields(admin, lock)).isEqualTo(1);
        store.release("single", "holder:1:2:x", held.token());
        first.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void release_handsTheLockToAWaitingWriterOfItsSpace_withoutATryOfItsOwn() throws Exception {
        LockSpace space = space("poll=10m");
        RedisClient admin = admin();
        String lock = keys.lock("hand");
        space.tryAcquire("hand-warm-up")
                .orElseThrow()
                .close(); // the scripts loaded (a first EVALSHA fails with NOSCRIPT)
        Lease held = space.lock("hand").lease(Duration.ofSeconds(30)).acquire(Timing.seconds(5));
        Future<Lease> waiter = pool.submit(
                () -> space.lock("hand").lease(Duration.ofSeconds(30)).acquire(Timing.seconds(30)));
        await().atMost(Timing.seconds(10)).until(() -> queuedFields(admin, lock) == 1);
        long before = scriptsRun(admin);
        held.close();
        Lease next = waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(scriptsRun(admin) - before)
                .as("scripts for the hand-off: the release alone")
                .isEqualTo(1);
        assertThat(next.token()).isGreaterThan(held.token());
        assertThat(space.status("hand").holders()).singleElement().satisfies(h -> {
            assertThat(h.ownerId()).hasValue(next.owner().id());
            assertThat(h.token()).hasValue(next.token());
        });
        assertThat(Duration.between(java.time.Instant.now(), next.validUntil()))
                .isBetween(Duration.ofSeconds(20), Duration.ofSeconds(30));
        next.renew();
        next.close();
        assertThat(admin.exists(lock)).as("released with the handed token").isFalse();
    }

    @Test
    void threadsPassingOneLock_byHandOffs_neverOverlap_andTokensOnlyGrow() throws Exception {
        LockSpace space = space("poll=10m");
        RedisClient admin = admin();
        long before = scriptsRun(admin);
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        long[] last = {0};
        int threads = 6;
        int rounds = 150;
        List<Future<Long>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            fs.add(pool.submit(() -> {
                long bad = 0;
                for (int i = 0; i < rounds; i++) {
                    try (Lease l =
                            space.lock("passed").lease(Duration.ofSeconds(30)).acquire(Timing.seconds(60))) {
                        if (inside.incrementAndGet() != 1) {
                            bad++;
                        }
                        if (l.token() <= last[0]) {
                            bad++;
                        }
                        last[0] = l.token();
                        Thread.yield();
                        inside.decrementAndGet();
                    }
                }
                return bad;
            }));
        }
        for (Future<Long> f : fs) {
            assertThat(f.get(Timing.seconds(120).toMillis(), TimeUnit.MILLISECONDS))
                    .as("overlaps and tokens out of order")
                    .isZero();
        }
        // Each cycle is a release and, unless its grant was handed over, a try or two: well under
        // the three scripts a cycle took without hand-offs.
        double perCycle = (scriptsRun(admin) - before) / (double) (threads * rounds);
        assertThat(perCycle).as("scripts per cycle").isLessThan(2.9);
    }

    @Test
    void handedGrant_ofAnAttemptThatStoppedWaiting_isDroppedByItsLeave() {
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        RedisClient admin = admin();
        String lock = keys.lock("dropped");
        RedisLockStore.Acquired held = store.acquire("dropped", Mode.EXCLUSIVE, "holder:1:2:x", 60_000, false, 5000);
        assertThat(store.acquire("dropped", Mode.EXCLUSIVE, "waiter:1:2:y", 60_000, true, 5000)
                        .granted())
                .isFalse();
        RedisLockStore.Released r =
                store.release("dropped", "holder:1:2:x", held.token(), List.of("waiter:1:2:y", "60000"));
        assertThat(r.released()).isTrue();
        assertThat(r.handedTo()).isEqualTo("waiter:1:2:y");
        assertThat(r.handedToken()).isGreaterThan(held.token());
        assertThat(admin.hkeys(lock)).containsExactly("h:waiter:1:2:y");
        // The attempt closed before it saw the grant: its leave gives the lock up.
        assertThat(store.leave("dropped", "waiter:1:2:y")).isTrue();
        assertThat(admin.exists(lock)).isFalse();
    }

    @Test
    void handOff_goesOnlyToTheWaiterWhoseTurnItIs() {
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        RedisClient admin = admin();
        String lock = keys.lock("turn");
        RedisLockStore.Acquired held = store.acquire("turn", Mode.EXCLUSIVE, "holder:1:2:x", 60_000, false, 5000);
        assertThat(store.acquire("turn", Mode.EXCLUSIVE, "first:1:2:a", 60_000, true, 5000)
                        .granted())
                .isFalse();
        assertThat(store.acquire("turn", Mode.EXCLUSIVE, "second:1:2:b", 60_000, true, 5000)
                        .granted())
                .isFalse();
        // The second is of the releasing process, the first is not: nobody is handed the lock.
        RedisLockStore.Released r =
                store.release("turn", "holder:1:2:x", held.token(), List.of("second:1:2:b", "60000"));
        assertThat(r.released()).isTrue();
        assertThat(r.handedTo()).isNull();
        assertThat(admin.hkeys(lock)).containsExactlyInAnyOrder("w:first:1:2:a", "w:second:1:2:b");
        // Nor to a reader, nor while a reader still holds.
        assertThat(store.leave("turn", "first:1:2:a")).isTrue();
        RedisLockStore.Acquired reader = store.acquire("turn", Mode.SHARED, "reader:1:2:r", 60_000, false, 5000);
        assertThat(reader.granted()).isFalse(); // the queued writer keeps new readers out
    }

    @Test
    void readersQueuedTogether_goInTogether_whenTheWriterReleases() throws Exception {
        LockSpace holder = space("");
        LockSpace waiting = space("poll=10m");
        Lease held = holder.tryAcquire("readers").orElseThrow();
        List<Future<Lease>> readers = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            readers.add(pool.submit(() -> waiting.acquire("readers", Mode.SHARED, Timing.seconds(30))));
            int queued = i;
            await().atMost(Timing.seconds(10))
                    .until(() -> holder.status("readers").waiters() == queued);
        }
        long released = System.nanoTime();
        held.close();
        List<Lease> in = new ArrayList<>();
        for (Future<Lease> r : readers) {
            in.add(r.get(Timing.seconds(5).toMillis(), TimeUnit.MILLISECONDS));
        }
        // Both were woken by the one release; the second would otherwise look again only after 1.67s.
        assertThat(Duration.ofNanos(System.nanoTime() - released)).isLessThan(Timing.seconds(1));
        assertThat(holder.status("readers").holders()).hasSize(2);
        for (Lease l : in) {
            l.close();
        }
    }

    @Test
    void missedNotice_costsOnlyThePollInterval() throws Exception {
        LockSpace holder = space("");
        LockSpace waiting = space("poll=200ms");
        Lease held = holder.lock("missed")
                .lease(Duration.ofMinutes(5))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        Future<Lease> waiter = pool.submit(() -> waiting.acquire("missed", Timing.seconds(60)));
        await().atMost(Timing.seconds(10)).until(() -> holder.status("missed").waiters() == 1);
        admin().hdel(keys.lock("missed"), "h:" + held.owner().id()); // gone without a notice
        waiter.get(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS).close();
    }

    @Test
    void deadHolder_isWaitedForOnlyUntilItsLeaseRunsOutOnTheServer() throws Exception {
        LockSpace waiting = space("poll=10m");
        // A holder that died: nothing will release it or publish a notice.
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        assertThat(store.acquire("dead", Mode.EXCLUSIVE, "deadhost:1:2:x", 300, false, 300)
                        .granted())
                .isTrue();
        long start = System.nanoTime();
        waiting.acquire("dead", Timing.seconds(30)).close();
        // The busy answer says when the holder's lease runs out; without it the waiter would look again after 1.67s.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Timing.scaled(Duration.ofMillis(1200)));
    }

    @Test
    void queuedReader_isNotPassedByALaterWriter_evenWhileTheLockIsFree() throws Exception {
        LockSpace locks = space("");
        RedisLockStore store = new RedisLockStore(admin(), keys, "test", () -> {});
        assertThat(store.acquire("fair", Mode.EXCLUSIVE, "otherhost:1:2:x", 60_000, false, 5000)
                        .granted())
                .isTrue();
        Future<Lease> reader = pool.submit(() -> space("poll=10m").acquire("fair", Mode.SHARED, Timing.seconds(30)));
        await().atMost(Timing.seconds(10)).until(() -> locks.status("fair").waiters() == 1);
        admin().hdel(keys.lock("fair"), "h:otherhost:1:2:x"); // the lock is free, and the reader has not been told
        assertThat(locks.status("fair").isFree()).isTrue();
        assertThat(locks.tryAcquire("fair"))
                .as("a new writer gives way to the queued reader")
                .isEmpty();
        assertThat(locks.tryAcquire("fair", Mode.SHARED))
                .as("a new reader may join")
                .isPresent()
                .get()
                .satisfies(Lease::close);
        reader.get(10, TimeUnit.SECONDS).close();
        locks.tryAcquire("fair").orElseThrow().close();
    }

    @Test
    void injectedClient_works_andIsNotClosedWithTheSpace() {
        RedisClient client = admin();
        LockSpace s = RedisLocks.builder(client).prefix(prefix).open();
        try (Lease l = s.tryAcquire("injected").orElseThrow()) {
            assertThat(space("").tryAcquire("injected")).isEmpty();
            assertThat(s.status("injected").holders()).hasSize(1);
            assertThat(s.uri()).isEqualTo("redis:client?prefix=" + prefix);
        }
        s.close();
        assertThat(client.ping()).isEqualTo("PONG");
    }

    /**
     * Two waiters queued within one millisecond used to tie on their place, and the tie went by
     * owner id: a newcomer could sort ahead of the waiter a release had just named, and both then
     * waited for a notice nobody sent (seen as 1 s stalls with two processes passing a lock).
     * A new place now always comes after every queued one.
     */
    @Test
    void aNewWaiter_isQueuedAfterEveryWaiterAlreadyThere_evenWithinTheSameMillisecond() {
        LockSpace s = space("");
        RedisClient admin = admin();
        RedisLockStore store = ((RedisLockBackend) Spaces.backend(s)).store;
        Lease held = s.tryAcquire("tie").orElseThrow();
        String first = "vm:1:1:ffff";
        String second = "vm:1:1:0000"; // sorts before the first by owner id
        assertThat(store.acquire("tie", Mode.EXCLUSIVE, first, 30_000, true, 5_000)
                        .granted())
                .isFalse();
        // As if the second came in the same millisecond (or the clock stepped back): the first's place is now "later".
        String key = keys.lock("tie");
        String[] f = admin.hget(key, "w:" + first).split(" ");
        long firstSince = Long.parseLong(f[2]) + 60_000;
        admin.hset(key, "w:" + first, f[0] + " " + f[1] + " " + firstSince);
        assertThat(store.acquire("tie", Mode.EXCLUSIVE, second, 30_000, true, 5_000)
                        .granted())
                .isFalse();
        long secondSince = Long.parseLong(admin.hget(key, "w:" + second).split(" ")[2]);
        assertThat(secondSince)
                .as("the newcomer's place comes after the first's")
                .isGreaterThan(firstSince);
        held.close();
        assertThat(store.acquire("tie", Mode.EXCLUSIVE, second, 30_000, true, 5_000)
                        .granted())
                .as("not the second's turn")
                .isFalse();
        assertThat(store.acquire("tie", Mode.EXCLUSIVE, first, 30_000, true, 5_000)
                        .granted())
                .as("the first's turn")
                .isTrue();
    }

    @Test
    void injectedClient_backend_takesASpaceBuiltAroundIt_withMetrics() {
        RedisClient client = admin();
        List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        dev.interlock.LockMetrics metrics = new dev.interlock.LockMetrics() {
            @Override
            public void acquired(String backend, String name, Mode mode, long waitNanos, boolean contended) {
                events.add("acquired " + backend + " " + name);
            }

            @Override
            public void released(String backend, String name, Mode mode, long holdNanos) {
                events.add("released " + backend + " " + name);
            }
        };
        try (LockSpace s = Interlock.builder(
                        RedisLocks.builder(client).prefix(prefix).backend())
                .metrics(metrics)
                .open()) {
            s.tryAcquire("metered").orElseThrow().close();
        }
        assertThat(events).containsExactly("acquired redis metered", "released redis metered");
        assertThat(client.ping()).as("the application's client stays open").isEqualTo("PONG");
    }

    @Test
    void spaceUri_andMessages_neverShowTheUserOrPassword() {
        LockSpace locks = space("");
        assertThat(locks.uri()).startsWith("redis://").contains("?prefix=" + prefix);
        try (Lease held = locks.tryAcquire("busy").orElseThrow()) {
            assertThatThrownBy(() -> locks.acquire("busy", Duration.ofMillis(100)))
                    .hasMessageStartingWith(locks.uri() + " - 'busy'");
        }
    }
}
