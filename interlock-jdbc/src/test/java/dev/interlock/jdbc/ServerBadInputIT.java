package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import org.junit.jupiter.api.Test;

/** Wrong credentials, an unreachable server, a read-only database: clear errors, no password shown, no lock granted. */
class ServerBadInputIT {
    @Test
    void postgres_unknownUser_isRefusedClearly() {
        String url = TestServers.postgresUrl().replace("user=postgres", "user=nobody&password=hunter2");
        assertThatThrownBy(() -> Interlock.open(url + "&create=true"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("connecting failed: the database refused the user name or password")
                .hasMessageContaining("nobody")
                .hasMessageNotContaining("hunter2")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isFalse());
    }

    @Test
    void mariadb_wrongPassword_isRefusedClearly() {
        String base = TestServers.mariadbUrl();
        TestServers.execute(
                base,
                "CREATE USER IF NOT EXISTS 'locker'@'%' IDENTIFIED BY 'right-one'",
                "GRANT ALL ON interlock.* TO 'locker'@'%'");
        String url = base.replace("user=root", "user=locker&password=wrong-one");
        assertThatThrownBy(() -> Interlock.open(url + "&create=true"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("the database refused the user name or password")
                .hasMessageNotContaining("wrong-one");
        try (LockSpace s = Interlock.open(base.replace("user=root", "user=locker&password=right-one")
                + "&create=true&table=" + TestServers.table())) {
            s.tryAcquire("ok").orElseThrow().close();
        }
    }

    @Test
    void unreachableServer_isTransientAndSaysSo() {
        int port = TestServers.freePort(); // nothing listens there
        assertThatThrownBy(() -> Interlock.open("jdbc:postgresql://127.0.0.1:" + port + "/db?user=u&password=hunter2"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("cannot reach the database")
                .hasMessageNotContaining("hunter2")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isTrue());
        assertThatThrownBy(() -> Interlock.open(
                        "jdbc:mariadb://127.0.0.1:" + port + "/db?user=u&password=hunter2&sslMode=disable"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("cannot reach the database")
                .hasMessageNotContaining("hunter2");
    }

    @Test
    void postgres_readOnlyDatabase_grantsNothing_andSaysWhy() {
        String admin = TestServers.postgresUrl();
        String table = TestServers.table();
        TestServers.execute(
                admin,
                "DROP ROLE IF EXISTS reader",
                "CREATE ROLE reader LOGIN",
                "ALTER ROLE reader SET default_transaction_read_only = on");
        try (LockSpace s = Interlock.open(TestServers.withOptions(admin, "create=true&table=" + table))) {
            s.tryAcquire("x").orElseThrow().close();
        }
        TestServers.execute(admin, "GRANT ALL ON " + table + ", " + table + "_shared, " + table + "_queue TO reader");
        String ro = admin.replace("user=postgres", "user=reader");
        try (LockSpace s = Interlock.open(TestServers.withOptions(ro, "table=" + table))) {
            assertThatThrownBy(() -> s.tryAcquire("x"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("acquiring 'x' failed: the database is read-only");
            assertThat(s.status("x").isFree()).isTrue();
        }
        assertThatThrownBy(
                        () -> Interlock.open(TestServers.withOptions(ro, "create=true&table=" + TestServers.table())))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("read-only");
    }

    @Test
    void postgres_tableOfAnEarlierBuild_withoutWantedUntil_saysWhichColumnToAdd() {
        String table = TestServers.table();
        String url = TestServers.withOptions(TestServers.postgresUrl(), "table=" + table);
        Interlock.open(TestServers.withOptions(url, "create=true")).close();
        TestServers.execute(url, "ALTER TABLE " + table + " DROP COLUMN wanted_until");
        assertThatThrownBy(() -> Interlock.open(url))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("created by an earlier Interlock")
                .hasMessageContaining("ALTER TABLE " + table + " ADD COLUMN wanted_until TIMESTAMPTZ");
        TestServers.execute(url, "ALTER TABLE " + table + " ADD COLUMN wanted_until TIMESTAMPTZ");
        try (LockSpace s = Interlock.open(url)) {
            assertThat(s.tryAcquire("x")).isPresent();
        }
    }

    /** Semaphores added the column {@code permits}: {@code create=true} adds it to a table of an earlier build on the servers too. */
    @Test
    void tableOfAnEarlierBuild_withoutPermits_isRefusedWithTheAlter_andUpgradedByCreateTrue() {
        for (String base : new String[] {TestServers.postgresUrl(), TestServers.mariadbUrl()}) {
            String table = TestServers.table();
            String url = TestServers.withOptions(base, "table=" + table);
            Interlock.open(TestServers.withOptions(url, "create=true")).close();
            TestServers.execute(url, "ALTER TABLE " + table + " DROP COLUMN permits");
            assertThatThrownBy(() -> Interlock.open(url))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("ALTER TABLE " + table + " ADD COLUMN permits INTEGER");
            try (LockSpace s = Interlock.open(TestServers.withOptions(url, "create=true"))) {
                assertThat(s.lock("x").limit(3).tryAcquire()).isPresent();
            }
        }
    }
}
