package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Releases notify only while someone waits for the name: PostgreSQL serialises the commits of all
 * notifying transactions, so releases of different names nobody waits for must not notify.
 * Notifications arrive in commit order, so the absence of one is proven by the arrival of a later
 * one, without waiting for nothing.
 */
class PostgresNotifyIT {
    @Test
    void releasesNobodyWaitsFor_sendNoNotification_andAReleaseAWaiterWaitsFor_does() throws Exception {
        String table = TestServers.table();
        String url = TestServers.withOptions(TestServers.postgresUrl(), "table=" + table + "&create=true");
        try (LockSpace a = Interlock.open(url);
                LockSpace b = Interlock.open(url);
                Connection listen =
                        DriverManager.getConnection(JdbcUrls.split(url).driverUrl())) {
            try (Statement st = listen.createStatement()) {
                st.execute("LISTEN \"interlock_" + table + "\"");
            }
            a.lock("alone")
                    .lease(Duration.ofMinutes(1))
                    .tryAcquire()
                    .orElseThrow()
                    .close();
            a.lock("readers")
                    .mode(Mode.SHARED)
                    .lease(Duration.ofMinutes(1))
                    .tryAcquire()
                    .orElseThrow()
                    .close();

            Lease held =
                    a.lock("wanted").lease(Duration.ofMinutes(1)).tryAcquire().orElseThrow();
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                try (Lease l = b.lock("wanted").lease(Duration.ofMinutes(1)).acquire(Duration.ofSeconds(60))) {
                    return l.token();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> wanted(url, table, NameKey.of("wanted")));
            held.close();
            assertThat(waiter.get(30, TimeUnit.SECONDS)).isGreaterThan(held.token());

            List<String> keys = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!keys.contains(NameKey.of("wanted")) && System.nanoTime() < deadline) {
                PGNotification[] got = listen.unwrap(PGConnection.class).getNotifications(1000);
                if (got != null) {
                    for (PGNotification n : got) {
                        keys.add(n.getParameter());
                    }
                }
            }
            assertThat(keys)
                    .as("notifications, in commit order")
                    .startsWith(NameKey.of("wanted"))
                    .doesNotContain(NameKey.of("alone"), NameKey.of("readers"));
        }
    }

    /**
     * A shared release notifies only when it frees something a waiter can take: a reader's, once
     * the last reader leaves; a permit's, always. Each release is followed by a marker notice sent
     * from another connection, so the notices between two markers are those of one release (and
     * of nothing else: the waiters only wait meanwhile).
     */
    @Test
    void aReaderNotifiesAWaitingWriterOnlyWhenTheLastLeaves_andAFreedPermitAlways() throws Exception {
        String table = TestServers.table();
        String url = TestServers.withOptions(TestServers.postgresUrl(), "table=" + table + "&create=true");
        String channel = "interlock_" + table;
        try (LockSpace a = Interlock.open(url);
                LockSpace b = Interlock.open(url);
                Connection listen =
                        DriverManager.getConnection(JdbcUrls.split(url).driverUrl());
                Connection marker =
                        DriverManager.getConnection(JdbcUrls.split(url).driverUrl())) {
            try (Statement st = listen.createStatement()) {
                st.execute("LISTEN \"" + channel + "\"");
            }
            Lease first = a.lock("read").mode(Mode.SHARED).tryAcquire().orElseThrow();
            Lease second = a.lock("read").mode(Mode.SHARED).tryAcquire().orElseThrow();
            CompletableFuture<Long> writer = waitFor(b, "read", 0);
            await().atMost(Duration.ofSeconds(30)).until(() -> wanted(url, table, NameKey.of("read")));
            first.close();
            assertThat(noticesUpTo(listen, marker, channel, "one reader left"))
                    .as("the first of two readers released")
                    .doesNotContain(NameKey.of("read"));
            second.close();
            assertThat(noticesUpTo(listen, marker, channel, "no reader left"))
                    .as("the last reader released")
                    .contains(NameKey.of("read"));
            assertThat(writer.get(30, TimeUnit.SECONDS)).isGreaterThan(second.token());

            Lease permit = a.lock("permit").limit(2).tryAcquire().orElseThrow();
            Lease other = a.lock("permit").limit(2).tryAcquire().orElseThrow();
            CompletableFuture<Long> waiter = waitFor(b, "permit", 2);
            await().atMost(Duration.ofSeconds(30)).until(() -> wanted(url, table, NameKey.of("permit")));
            permit.close();
            assertThat(noticesUpTo(listen, marker, channel, "a permit freed"))
                    .as("one of two permits released")
                    .contains(NameKey.of("permit"));
            assertThat(waiter.get(30, TimeUnit.SECONDS)).isGreaterThan(other.token());
            other.close();
        }
    }

    /** {@code space} waits for {@code name} (a permit of {@code limit}, or a plain lock for 0) and gives back its token. */
    private static CompletableFuture<Long> waitFor(LockSpace space, String name, int limit) {
        return CompletableFuture.supplyAsync(() -> {
            var request = space.lock(name).lease(Duration.ofMinutes(1));
            try (Lease l = (limit > 0 ? request.limit(limit) : request).acquire(Duration.ofSeconds(60))) {
                return l.token();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /**
     * Sends the notice {@code mark} from {@code marker} and returns the notices {@code listen} got
     * before it: those of everything committed before the mark (notices arrive in commit order).
     */
    private static List<String> noticesUpTo(Connection listen, Connection marker, String channel, String mark)
            throws Exception {
        try (PreparedStatement ps = marker.prepareStatement("SELECT pg_notify(?, ?)")) {
            ps.setString(1, channel);
            ps.setString(2, mark);
            ps.execute();
        }
        List<String> keys = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            PGNotification[] got = listen.unwrap(PGConnection.class).getNotifications(1000);
            for (PGNotification n : got == null ? new PGNotification[0] : got) {
                if (n.getParameter().equals(mark)) {
                    return keys;
                }
                keys.add(n.getParameter());
            }
        }
        throw new AssertionError("the marker notice " + mark + " did not arrive");
    }

    private static boolean wanted(String url, String table, String key) throws Exception {
        try (Connection c = DriverManager.getConnection(JdbcUrls.split(url).driverUrl());
                PreparedStatement ps =
                        c.prepareStatement("SELECT wanted_until > now() FROM " + table + " WHERE name_key = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }
}
