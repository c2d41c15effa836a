package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad configuration gets a clear error that says what to fix, and never a half-open space. */
class BadInputTest {
    private static String h2() {
        return "jdbc:h2:mem:b" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";
    }

    @Test
    void missingTable_withoutCreate_saysHowToCreateIt() {
        assertThatThrownBy(() -> Interlock.open(h2()))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("the lock table interlock_locks does not exist")
                .hasMessageContaining("docs/jdbc.md")
                .hasMessageContaining("?create=true")
                .satisfies(e ->
                        assertThat(((LockBackendException) e).isTransient()).isFalse());
    }

    @Test
    void tableOfTheWrongShape_isRefused_namingTheMissingColumns() {
        String url = h2();
        TestServers.execute(
                url,
                "CREATE TABLE distributed_locks (resource VARCHAR(255) PRIMARY KEY, owner VARCHAR(255) NOT NULL,"
                        + " expires_at TIMESTAMP NOT NULL, acquired_at TIMESTAMP NOT NULL)");
        assertThatThrownBy(() -> Interlock.open(url + "?table=distributed_locks&create=true"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("distributed_locks is not an Interlock lock table")
                .hasMessageContaining("name_key")
                .hasMessageNotContaining("Exception");
    }

    @Test
    void nameColumnTooNarrow_isRefused() {
        String url = h2();
        try (LockSpace s = Interlock.open(url + "?create=true")) {
            s.tryAcquire("x").orElseThrow().close();
        }
        TestServers.execute(
                url, "DELETE FROM interlock_locks", "ALTER TABLE interlock_locks ALTER COLUMN name VARCHAR(255)");
        assertThatThrownBy(() -> Interlock.open(url))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("holds 255 characters");
    }

    @Test
    void tablesOfAnEarlierBuild_withoutTheLine_sayWhatToCreate_andCreateTrueAddsIt() {
        String url = h2();
        Interlock.open(url + "?create=true").close();
        TestServers.execute(url, "DROP TABLE interlock_locks_queue");
        assertThatThrownBy(() -> Interlock.open(url))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("created by an earlier Interlock and has no waiting line interlock_locks_queue")
                .hasMessageContaining("docs/jdbc.md");
        try (LockSpace s = Interlock.open(url + "?create=true")) {
            assertThat(s.tryAcquire("x")).isPresent();
        }
    }

    /** Semaphores added the lock table's column {@code permits}: a table of an earlier build is upgraded, or refused with the ALTER to run. */
    @Test
    void lockTableOfAnEarlierBuild_withoutPermits_saysWhatToAdd_andCreateTrueAddsIt() {
        String url = h2();
        try (LockSpace s = Interlock.open(url + "?create=true")) {
            s.tryAcquire("held-before").orElseThrow().close();
        }
        TestServers.execute(url, "ALTER TABLE interlock_locks DROP COLUMN permits");
        assertThatThrownBy(() -> Interlock.open(url))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("created by an earlier Interlock and lacks the column permits")
                .hasMessageContaining("ALTER TABLE interlock_locks ADD COLUMN permits INTEGER")
                .hasMessageNotContaining("Exception");
        try (LockSpace s = Interlock.open(url + "?create=true")) {
            assertThat(s.lock("held-before").limit(2).tryAcquire()).isPresent();
        }
        Interlock.open(url).close(); // upgraded: no option needed any more
    }

    @Test
    void badTableNames_areRefusedWithTheRule() {
        for (String t : new String[] {"a-b", "x;drop", "\"q\"", "s.t", "1abc", "", "a".repeat(49)}) {
            assertThatThrownBy(() -> Interlock.open(h2() + "?create=true&table=" + t), t)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("lock table name");
        }
    }

    @Test
    void badOptions_sayTheExpectedForm() {
        assertThatThrownBy(() -> Interlock.open(h2() + "?create=maybe"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("create=maybe: use true or false");
        assertThatThrownBy(() -> Interlock.open(h2() + "?create=true&poll=fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("such as 500ms");
        assertThatThrownBy(() -> Interlock.open(h2() + "?create=true&timeout=10ms"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("between 1s and 10m");
    }

    @Test
    void unknownDriver_saysWhichJarToAdd() {
        assertThatThrownBy(() -> Interlock.open("jdbc:nosuchdb://host/db?password=secret"))
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("no JDBC driver on the class path accepts this URL")
                .hasMessageContaining("org.postgresql:postgresql")
                .hasMessageNotContaining("secret");
    }

    @Test
    void unsupportedDatabase_isNamed() {
        // SQLite is supported; an H2 URL in a mode that reports another product is not something we can build, so check
        // the list.
        assertThat(Dialect.forProduct("Oracle")).isNull();
        assertThat(Dialect.forProduct("PostgreSQL")).isInstanceOf(Dialect.Postgres.class);
        assertThat(Dialect.forProduct("MariaDB")).isInstanceOf(Dialect.MySql.class);
        assertThat(Dialect.forProduct("MySQL")).isInstanceOf(Dialect.MySql.class);
        assertThat(Dialect.forProduct("H2")).isInstanceOf(Dialect.H2.class);
        assertThat(Dialect.forProduct("SQLite")).isInstanceOf(Dialect.Sqlite.class);
    }

    @Test
    void readOnlyDatabase_isAClearError() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("interlock-ro", ".db");
        try {
            try (LockSpace s = Interlock.open("jdbc:sqlite:" + file + "?create=true")) {
                s.tryAcquire("x").orElseThrow().close();
            }
            try (LockSpace s = Interlock.open("jdbc:sqlite:" + file + "?open_mode=1")) { // SQLITE_OPEN_READONLY
                assertThatThrownBy(() -> s.tryAcquire("x"))
                        .isInstanceOf(LockBackendException.class)
                        .hasMessageContaining("acquiring 'x' failed: the database is read-only");
            }
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void urlOptions_areTakenOut_andPasswordsMasked() {
        JdbcUrls.Split s = JdbcUrls.split("jdbc:postgresql://h/db?user=u&table=t1&password=p%26w&create=true&ssl=true");
        assertThat(s.driverUrl()).isEqualTo("jdbc:postgresql://h/db?user=u&password=p%26w&ssl=true");
        assertThat(s.options()).containsEntry("table", "t1").containsEntry("create", "true");
        assertThat(JdbcUrls.split("jdbc:h2:mem:x;DB_CLOSE_DELAY=-1?create=true").driverUrl())
                .isEqualTo("jdbc:h2:mem:x;DB_CLOSE_DELAY=-1");
        assertThat(JdbcUrls.mask("jdbc:postgresql://h/db?user=u&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=****&ssl=true");
        assertThat(JdbcUrls.mask("jdbc:mysql://u:s3cret@h:3306/db")).isEqualTo("jdbc:mysql://u:****@h:3306/db");
        assertThat(JdbcUrls.mask("jdbc:h2:tcp://h/db;USER=sa;PASSWORD=s3cret")).doesNotContain("s3cret");
    }

    /** Issue 25: a driver ignores a parameter it does not know, so a misspelt ?tabel= would lock in another table. */
    @Test
    void unknownUrlParameter_isRefused_beforeAnythingIsOpened() {
        for (String url : new String[] {
            "jdbc:postgresql://127.0.0.1:1/db?user=u&tabel=net_locks",
            "jdbc:mariadb://127.0.0.1:1/db?tabel=net_locks",
            "jdbc:sqlite::memory:?tabel=net_locks&create=true",
            h2() + "?tabel=net_locks&create=true"
        }) {
            assertThatThrownBy(() -> Interlock.open(url), url)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("unknown option 'tabel' (did you mean 'table'?)")
                    .hasMessageContaining("create=...");
        }
        assertThat(JdbcUrls.split(
                                "jdbc:postgresql://h/db?sslmode=disable&ApplicationName=a&table=t",
                                JdbcUrls.takenBy(new org.postgresql.Driver(), "jdbc:postgresql://h/db"),
                                "pg")
                        .driverUrl())
                .as("the driver's own parameters pass")
                .isEqualTo("jdbc:postgresql://h/db?sslmode=disable&ApplicationName=a");
        assertThat(JdbcUrls.split(
                                "jdbc:mariadb://h/db?sslMode=disable&connectTimeout=5",
                                JdbcUrls.takenBy(new org.mariadb.jdbc.Driver(), "jdbc:mariadb://h/db"),
                                "mariadb")
                        .driverUrl())
                .isEqualTo("jdbc:mariadb://h/db?sslMode=disable&connectTimeout=5");
    }

    @Test
    void connectTimeouts_areAddedUnlessGiven() {
        JdbcOptions o = JdbcOptions.builder()
                .statementTimeout(java.time.Duration.ofSeconds(3))
                .build();
        Properties p = JdbcLockBackend.connectTimeouts("jdbc:postgresql://h/db?socketTimeout=60", new Properties(), o);
        assertThat(p)
                .containsEntry("loginTimeout", "3")
                .containsEntry("connectTimeout", "3")
                .doesNotContainKey("socketTimeout");
        Properties m = JdbcLockBackend.connectTimeouts("jdbc:mariadb://h/db", new Properties(), o);
        assertThat(m)
                .containsEntry("connectTimeout", "3000")
                .containsEntry("socketTimeout", "8000")
                .as("a permit's try and release are one text of statements each (docs/jdbc.md)")
                .containsEntry("allowMultiQueries", "true");
        assertThat(JdbcLockBackend.connectTimeouts(
                        "jdbc:mariadb://h/db?allowMultiQueries=false", new Properties(), 500))
                .as("as the URL says")
                .doesNotContainKey("allowMultiQueries");
    }

    /**
     * A driver's message may repeat the password (MariaDB reads {@code //user:PASSWORD@host} as a
     * port: "Incorrect port value : PASSWORD@127.0.0.1"; SQLite names its path with the query), and a
     * URL for a driver that is not installed was masked by a narrower rule than the URI's. Every
     * message is masked with the URI's rule now. One URL per driver the command line carries, each
     * failing without a server.
     */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "jdbc:mariadb://user:Hunter2pw@127.0.0.1/db",
                "jdbc:mariadb://127.0.0.1:1/db?user=u&password=Hunter2pw",
                "jdbc:postgresql://user:Hunter2pw@127.0.0.1:1/db",
                "jdbc:postgresql://127.0.0.1:1/db?password=Hunter2pw",
                "jdbc:h2:/nonexistent-interlock-dir/db;IFEXISTS=TRUE;PASSWORD=Hunter2pw",
                "jdbc:sqlite:/nonexistent-interlock-dir/x.db?password=Hunter2pw",
                "jdbc:oracle:thin:scott/Hunter2pw@db.example:1521/app",
                "jdbc:nosuchdriver://db.example/app?token=Hunter2pw",
                "jdbc:nosuchdriver://db.example/app?apikey=Hunter2pw"
            })
    void driverMessages_neverShowThePassword(String url) {
        assertThatThrownBy(() -> JdbcLockBackend.open(
                                url,
                                new Properties(),
                                JdbcOptions.builder()
                                        .statementTimeout(java.time.Duration.ofSeconds(2))
                                        .build())
                        .close())
                .isInstanceOf(LockBackendException.class)
                .satisfies(e ->
                        assertThat(e.getMessage()).doesNotContain("Hunter2pw").contains("****"));
    }
}
