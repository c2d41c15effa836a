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
