package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockInfo;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.spi.support.Spaces;
import dev.interlock.testkit.Timing;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The time rules and error semantics of the {@code jdbc:} backend, on every database. Time is
 * made to pass the way lock-table tests usually do it: by writing expiry times into the rows, computed by the
 * database's own clock ({@code now - 60s}), never by sleeping. Leases here are long and fixed, so
 * nothing expires or renews unless a test makes it.
 */
abstract class JdbcSemanticsContract {
    /** The database's URL, without Interlock's options. */
    protected abstract String baseUrl();

    private final String table = TestServers.table();
    private LockSpace a;
    private LockSpace b;
    private String driverUrl;
    private LockStore store;

    @BeforeEach
    void open() {
        String url = TestServers.withOptions(baseUrl(), "table=" + table + "&create=true");
        a = Interlock.open(url);
        b = Interlock.open(url);
        driverUrl = JdbcUrls.split(url).driverUrl();
        store = ((JdbcLockBackend) Spaces.backend(a)).store;
    }

    @AfterEach
    void close() {
        b.close();
        a.close();
        afterClose();
    }

    /** Runs after both spaces are closed (e.g. to remove a database file). */
    protected void afterClose() {}

    private Lease take(LockSpace s, String name, Mode mode) {
        return s.lock(name)
                .mode(mode)
                .lease(Duration.ofMinutes(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow(() -> new AssertionError("'" + name + "' " + mode + " was not granted"));
    }

    /** Runs an UPDATE or DELETE in which {@code AGO} stands for the database's now minus 60s. */
    private int craft(String sql, Object... params) {
        String ago = store.dialect.plusMillisParam(store.dialect.now());
        List<Object> all = new ArrayList<>();
        StringBuilder out = new StringBuilder();
        int from = 0;
        int p = 0;
        for (int i = sql.indexOf('?'), j = sql.indexOf("AGO");
                i >= 0 || j >= 0;
                i = sql.indexOf('?', from), j = sql.indexOf("AGO", from)) {
            if (j >= 0 && (i < 0 || j < i)) {
                out.append(sql, from, j).append(ago);
                all.add(-60_000L);
                from = j + 3;
            } else {
                out.append(sql, from, i + 1);
                all.add(params[p++]);
                from = i + 1;
            }
        }
        out.append(sql.substring(from));
        try (Connection c = DriverManager.getConnection(driverUrl);
                PreparedStatement ps = c.prepareStatement(out.toString())) {
            for (int i = 0; i < all.size(); i++) {
                ps.setObject(i + 1, all.get(i));
            }
            return ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException("crafting rows failed: " + e.getMessage(), e);
        }
    }

    private long count(String sql, Object... params) {
        try (Connection c = DriverManager.getConnection(driverUrl);
                PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < params.length; i++) {
                ps.setObject(i + 1, params[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private void expireExclusive(String name) {
        assertThat(craft("UPDATE " + table + " SET expires_at = AGO WHERE name_key = ?", NameKey.of(name)))
                .isEqualTo(1);
    }

    private void expireReaders(String name) {
        craft("UPDATE " + table + " SET shared_until = AGO WHERE name_key = ?", NameKey.of(name));
        craft("UPDATE " + table + "_shared SET expires_at = AGO WHERE name_key = ?", NameKey.of(name));
    }

    // ------------------------------------------------------------------------------ exclusive

    @Test
    void expiredHolder_isTakenOver_andItsRenewAndReleaseTouchNothing() {
        Lease old = take(a, "job", Mode.EXCLUSIVE);
        assertThat(b.tryAcquire("job")).isEmpty();
        expireExclusive("job"); // a stale lock left by a crashed process
        Lease taken = take(b, "job", Mode.EXCLUSIVE);
        assertThat(taken.token()).isGreaterThan(old.token());
        assertThatThrownBy(old::renew)
                .isInstanceOf(LockLostException.class)
                .hasMessageContaining("taken over")
                .hasMessageStartingWith(a.uri() + " - lost 'job' (token " + old.token() + "): ");
        old.close(); // lost already: nothing to release, and certainly not the new holder's lock
        assertThat(a.tryAcquire("job")).isEmpty();
        assertThat(a.status("job").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.ownerId()).contains(taken.owner().id()));
        taken.close();
    }

    @Test
    void ownLeaseRanOut_renewSaysSo_evenIfNobodyTookIt() {
        Lease l = take(a, "job", Mode.EXCLUSIVE);
        expireExclusive("job");
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("ran out");
        assertThat(l.isValid()).isFalse();
        assertThat(a.status("job").isFree()).isTrue();
        take(b, "job", Mode.EXCLUSIVE).close();
    }

    @Test
    void lateRelease_ofAnExpiredHolder_neverFreesTheNextHolder() {
        Lease old = take(a, "late", Mode.EXCLUSIVE);
        expireExclusive("late");
        Lease next = take(b, "late", Mode.EXCLUSIVE);
        assertThat(store.release("late", Mode.EXCLUSIVE, old.owner().id(), 0))
                .as("released by the old owner")
                .isFalse();
        assertThat(a.tryAcquire("late")).isEmpty();
        next.close();
        old.close();
    }

    /** Issue 25: the grant tells the core whether its owner-checked release freed anything, so a release that did not is never logged as one. */
    @Test
    void releaseIfOwned_ofAnExpiredHolderWhoseLockPassedOn_answersFalse() throws Exception {
        dev.interlock.spi.LockBackend backend = Spaces.backend(a);
        try (dev.interlock.spi.Attempt first = backend.attempt(spec("told"));
                dev.interlock.spi.Attempt second = backend.attempt(spec("told"))) {
            dev.interlock.spi.Grant old = first.tryAcquire().orElseThrow();
            expireExclusive("told");
            Lease next = take(b, "told", Mode.EXCLUSIVE);
            assertThat(old.releaseIfOwned()).as("the old holder's release").isFalse();
            assertThat(a.tryAcquire("told")).as("the next holder keeps it").isEmpty();
            next.close();
            assertThat(second.tryAcquire().orElseThrow().releaseIfOwned())
                    .as("a holder's own release")
                    .isTrue();
        }
    }

    /**
     * The same for a reader whose lease ran out and whose epoch moved on (a writer was granted over
     * it, which leaves its row): it was no longer counted, so its late release answers false, and
     * removes its row all the same.
     */
    @Test
    void releaseIfOwned_ofADeadReaderWhoseEpochMovedOn_answersFalse_andRemovesItsRow() throws Exception {
        dev.interlock.spi.LockBackend backend = Spaces.backend(a);
        try (dev.interlock.spi.Attempt reader = backend.attempt(spec("told-r", Mode.SHARED));
                dev.interlock.spi.Attempt live = backend.attempt(spec("told-r", Mode.SHARED))) {
            dev.interlock.spi.Grant dead = reader.tryAcquire().orElseThrow();
            expireReaders("told-r");
            take(b, "told-r", Mode.EXCLUSIVE).close();
            assertThat(count("SELECT COUNT(*) FROM " + table + "_shared"))
                    .as("the dead reader's row")
                    .isEqualTo(1);
            assertThat(dead.releaseIfOwned()).as("the dead reader's release").isFalse();
            assertThat(count("SELECT COUNT(*) FROM " + table + "_shared"))
                    .as("its row after it")
                    .isZero();
            assertThat(live.tryAcquire().orElseThrow().releaseIfOwned())
                    .as("a reader's own release")
                    .isTrue();
        }
    }

    private static dev.interlock.spi.AcquireSpec spec(String name) {
        return spec(name, Mode.EXCLUSIVE);
    }

    private static dev.interlock.spi.AcquireSpec spec(String name, Mode mode) {
        return dev.interlock.spi.AcquireSpec.builder(name, mode, dev.interlock.Owner.newAcquisition())
                .lease(Duration.ofMinutes(10))
                .build();
    }

    @Test
    void breakLock_onlyRemovesTheOwnerSeen() {
        Lease l = take(a, "brk", Mode.EXCLUSIVE);
        assertThat(b.breakLock("brk", "host:1:2:not-the-owner")).isFalse();
        assertThat(b.tryAcquire("brk")).isEmpty();
        assertThat(b.breakLock("brk", l.owner().id())).isTrue();
        assertThatThrownBy(l::renew).isInstanceOf(LockLostException.class).hasMessageContaining("broken or released");
        Lease next = take(b, "brk", Mode.EXCLUSIVE);
        assertThat(a.breakLock("brk", l.owner().id()))
                .as("the owner seen is gone; the new holder stays")
                .isFalse();
        assertThat(a.tryAcquire("brk")).isEmpty();
        next.close();
    }

    @Test
    void renew_extendsByTheDatabaseClock() {
        Lease l = a.lock("ext")
                .lease(Duration.ofMinutes(10))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        craft("UPDATE " + table + " SET expires_at = AGO WHERE name_key = ?", NameKey.of("ext"));
        // Now only the database knows it ran out: renewing must fail, not resurrect it.
        assertThatThrownBy(() -> l.renew(Duration.ofMinutes(10))).isInstanceOf(LockLostException.class);
        Lease m = a.lock("ext2")
                .lease(Duration.ofSeconds(2))
                .fixedLease()
                .tryAcquire()
                .orElseThrow();
        m.renew(Duration.ofHours(1));
        long left = a.status("ext2").holders().get(0).validUntil().orElseThrow().toEpochMilli()
                - System.currentTimeMillis();
        assertThat(left)
                .isBetween(
                        Duration.ofMinutes(55).toMillis(),
                        Duration.ofMinutes(65).toMillis());
        m.close();
    }

    // ------------------------------------------------------------------------------ shared

    @Test
    void readersWhoseLeasesRanOut_letAWriterIn_andCannotRenew() {
        Lease r1 = take(a, "rw", Mode.SHARED);
        Lease r2 = take(b, "rw", Mode.SHARED);
        assertThat(a.tryAcquire("rw")).isEmpty();
        expireReaders("rw");
        Lease w = take(b, "rw", Mode.EXCLUSIVE);
        assertThat(w.token()).isGreaterThan(r2.token());
        assertThatThrownBy(r1::renew).isInstanceOf(LockLostException.class).hasMessageContaining("taken over");
        r1.close();
        r2.close();
        assertThat(a.tryAcquire("rw", Mode.SHARED)).as("the writer still holds").isEmpty();
        w.close();
        Lease r3 = take(a, "rw", Mode.SHARED);
        assertThat(a.status("rw").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.ownerId()).contains(r3.owner().id()));
        assertThat(count("SELECT COUNT(*) FROM " + table + "_shared"))
                .as("dead readers' rows are cleaned up")
                .isEqualTo(1);
        r3.close();
    }

    @Test
    void lateReleaseOfADeadReader_neverLetsAWriterInOverALiveOne() {
        Lease dead = take(a, "epoch", Mode.SHARED);
        expireReaders("epoch");
        Lease live = take(b, "epoch", Mode.SHARED); // starts a new set of readers
        dead.close(); // must not count the live reader out
        assertThat(a.tryAcquire("epoch"))
                .as("a writer while a live reader holds")
                .isEmpty();
        assertThat(a.status("epoch").holders())
                .singleElement()
                .satisfies(h -> assertThat(h.ownerId()).contains(live.owner().id()));
        live.close();
        take(a, "epoch", Mode.EXCLUSIVE).close();
    }

    @Test
    void readerRenewal_failsOnceItsOwnLeaseRanOut() {
        Lease r1 = take(a, "own", Mode.SHARED);
        Lease r2 = take(b, "own", Mode.SHARED);
        craft(
                "UPDATE " + table + "_shared SET expires_at = AGO WHERE owner = ?",
                r1.owner().id());
        assertThatThrownBy(r1::renew).isInstanceOf(LockLostException.class).hasMessageContaining("ran out");
        r2.renew();
        // The lost lease is released in the background: until then it still counts as a reader.
        await().atMost(Timing.seconds(10))
                .until(() -> count(
                                "SELECT COUNT(*) FROM " + table + "_shared WHERE owner = ?",
                                r1.owner().id())
                        == 0);
        r1.close();
        r2.close();
        take(a, "own", Mode.EXCLUSIVE).close();
    }

    @Test
    void breakLock_removesOneReader_andCountsItOut() {
        Lease r1 = take(a, "brs", Mode.SHARED);
        Lease r2 = take(b, "brs", Mode.SHARED);
        assertThat(b.breakLock("brs", r1.owner().id())).isTrue();
        assertThatThrownBy(r1::renew).isInstanceOf(LockLostException.class).hasMessageContaining("broken or released");
        r1.close(); // after the break: must not count r2 out
        assertThat(a.tryAcquire("brs")).isEmpty();
        r2.close();
        take(a, "brs", Mode.EXCLUSIVE).close();
    }

    // ------------------------------------------------------------------------------ the writer's queue

    @Test
    void queuedWriter_keepsReadersOut_untilItsPlaceRunsOut() {
        take(a, "q", Mode.SHARED).close(); // the row exists
        assertThat(store.queueWriter("q", "other-host:1:1:abc", Duration.ofMinutes(10)))
                .isTrue();
        assertThat(b.tryAcquire("q", Mode.SHARED)).isEmpty();
        assertThat(b.tryAcquire("q"))
                .as("a later writer does not jump the queue")
                .isEmpty();
        LockInfo info = a.status("q");
        assertThat(info.queued()).singleElement().satisfies(w -> {
            assertThat(w.waiting()).isTrue();
            assertThat(w.ownerId()).contains("other-host:1:1:abc");
        });
        craft("UPDATE " + table + " SET waiter_until = AGO WHERE name_key = ?", NameKey.of("q"));
        take(b, "q", Mode.SHARED).close();
        assertThat(a.status("q").queued()).isEmpty();
    }

    // ------------------------------------------------------------------------------ the line

    @Test
    void aPlaceInLine_keepsLaterTriesOut_untilItRunsOut() {
        take(a, "line", Mode.EXCLUSIVE).close(); // the row exists
        String dead = "other-host:1:1:abc";
        assertThat(store.keepInLine("line", Mode.EXCLUSIVE, dead, LockStore.NOT_IN_LINE, Duration.ofMinutes(10))
                        .ahead())
                .isZero();
        assertThat(b.tryAcquire("line"))
                .as("a try not in line comes after the line")
                .isEmpty();
        assertThat(b.tryAcquire("line", Mode.SHARED))
                .as("a reader does not pass a writer in line")
                .isEmpty();
        assertThat(a.status("line").queued())
                .singleElement()
                .satisfies(w -> assertThat(w.ownerId()).contains(dead));
        craft("UPDATE " + table + "_queue SET expires_at = AGO WHERE owner = ?", dead); // its waiter died
        take(b, "line", Mode.EXCLUSIVE).close();
        assertThat(a.status("line").queued()).isEmpty();
    }

    @Test
    void theLine_servesInTicketOrder_andAGrantTakesItsPlaceOut() {
        Lease held = take(a, "order", Mode.EXCLUSIVE);
        Duration lease = Duration.ofMinutes(10);
        LockStore.Place first = store.keepInLine("order", Mode.EXCLUSIVE, "h:1:1:first", LockStore.NOT_IN_LINE, lease);
        LockStore.Place second = store.keepInLine("order", Mode.SHARED, "h:1:1:second", LockStore.NOT_IN_LINE, lease);
        assertThat(second.ticket()).isGreaterThan(first.ticket());
        assertThat(store.keepInLine("order", Mode.SHARED, "h:1:1:second", second.ticket(), lease)
                        .ahead())
                .as("a writer before the reader")
                .isEqualTo(1);
        assertThat(a.status("order").queued())
                .extracting(w -> w.ownerId().orElseThrow())
                .containsExactly("h:1:1:first", "h:1:1:second");
        held.close();
        assertThat(store.tryAcquire("order", Mode.SHARED, "h:1:1:second", lease, second.ticket()))
                .isEqualTo(LockStore.Busy.BUSY);
        assertThat(store.tryAcquire("order", Mode.EXCLUSIVE, "h:1:1:first", lease, first.ticket()))
                .isInstanceOf(LockStore.Granted.class);
        assertThat(store.keepInLine("order", Mode.SHARED, "h:1:1:second", second.ticket(), lease)
                        .ahead())
                .as("first was served")
                .isZero();
        assertThat(store.release("order", Mode.EXCLUSIVE, "h:1:1:first", 0)).isTrue();
        assertThat(store.tryAcquire("order", Mode.SHARED, "h:1:1:second", lease, second.ticket()))
                .isInstanceOf(LockStore.Granted.class);
        assertThat(a.status("order").queued()).isEmpty();
    }

    // ------------------------------------------------------------------------------ tokens and names

    @Test
    void tokens_keepGrowing_whenHolderRowsAreDeleted() {
        long last = 0;
        for (int i = 0; i < 6; i++) {
            Lease l = take(i % 2 == 0 ? a : b, "fence", i % 3 == 0 ? Mode.SHARED : Mode.EXCLUSIVE);
            assertThat(l.token()).isGreaterThan(last);
            last = l.token();
            l.close();
            craft("DELETE FROM " + table + "_shared");
        }
        assertThat(count("SELECT COUNT(*) FROM " + table + " WHERE name_key = ?", NameKey.of("fence")))
                .as("the row stays")
                .isEqualTo(1);
        assertThat(count("SELECT token FROM " + table + " WHERE name_key = ?", NameKey.of("fence")))
                .isEqualTo(last);
    }

    @Test
    void sqlMetacharactersAndLongNames_areJustNames() {
        List<String> names = List.of(
                "x'; DROP TABLE " + table + "; --",
                "%",
                "_",
                "a%",
                "\\",
                "\\'",
                "\"q\"",
                "$1",
                "?",
                ":name",
                "日".repeat(1024),
                "🔒".repeat(512),
                "é".repeat(1023) + "e",
                "é".repeat(1024));
        List<Lease> held = new ArrayList<>();
        try {
            for (String n : names) {
                held.add(take(a, n, Mode.EXCLUSIVE));
            }
            for (String n : names) {
                assertThat(b.tryAcquire(n))
                        .as("%s is held", n.length() > 20 ? n.substring(0, 20) + "..." : n)
                        .isEmpty();
                assertThat(b.status(n).holders()).hasSize(1);
            }
            assertThat(b.list()).extracting(LockInfo::name).containsAll(names);
        } finally {
            held.forEach(Lease::close);
        }
        assertThat(count("SELECT COUNT(*) FROM " + table)).isEqualTo(names.size());
    }

    /**
     * Processes that start together on a new table all create it: none may fail because another
     * created it first (PostgreSQL's CREATE TABLE IF NOT EXISTS races and reports "type ...
     * already exists", SQLState 42710, which once failed a multi-process test).
     */
    @Test
    void manySpacesCreatingOneNewTableAtOnce_allOpen() throws Exception {
        int n = 8;
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(n);
        try {
            for (int round = 0; round < 10; round++) { // a race: several new tables, 8 creators each
                String url = TestServers.withOptions(baseUrl(), "table=" + TestServers.table() + "&create=true");
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(n);
                List<java.util.concurrent.Future<?>> opened = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    opened.add(pool.submit(() -> {
                        start.await();
                        try (LockSpace s = Interlock.open(url)) {
                            s.tryAcquire("x").ifPresent(Lease::close);
                        }
                        return null;
                    }));
                }
                for (java.util.concurrent.Future<?> f : opened) {
                    f.get(Timing.seconds(60).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
