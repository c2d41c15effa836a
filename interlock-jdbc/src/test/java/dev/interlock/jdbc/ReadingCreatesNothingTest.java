package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code interlock status}, {@code list} and {@code break} open the space with
 * {@link Interlock#CREATE_NOTHING}: they used to create the lock tables of a {@code ?create=true}
 * URL (two per command) and report the lock free. Reading creates nothing, as on the file
 * backends: a missing table is an error that says so; the first lock creates it.
 */
class ReadingCreatesNothingTest {
    @TempDir
    Path tmp;

    @Test
    void h2_createTrue_openedToRead_createsNoTable() throws Exception {
        String db = "jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        try (Connection keep = DriverManager.getConnection(db)) {
            check(db, keep);
        }
    }

    @Test
    void sqlite_createTrue_openedToRead_createsNoTable() throws Exception {
        Path file = tmp.resolve("locks.db");
        String db = "jdbc:sqlite:" + file;
        try (Connection keep = DriverManager.getConnection(db)) {
            check(db, keep);
        }
    }

    private static void check(String db, Connection keep) throws Exception {
        String url = db + "?create=true&table=reads";
        assertThatThrownBy(() -> Interlock.builder(url)
                        .option(Interlock.CREATE_NOTHING, true)
                        .open()
                        .close())
                .isInstanceOf(LockBackendException.class)
                .hasMessageContaining("no lock table reads")
                .hasMessageContaining("nothing was created");
        assertThat(tables(keep)).isEmpty();
        try (LockSpace locks = Interlock.open(url)) { // the first space that may lock creates them
            locks.tryAcquire("x").orElseThrow().close();
        }
        assertThat(tables(keep)).containsExactlyInAnyOrder("reads", "reads_shared", "reads_queue");
        try (LockSpace reader =
                Interlock.builder(url).option(Interlock.CREATE_NOTHING, true).open()) {
            assertThat(reader.status("x").holders()).isEmpty();
        }
    }

    private static List<String> tables(Connection c) throws Exception {
        List<String> out = new ArrayList<>();
        try (ResultSet rs = c.getMetaData().getTables(null, null, "%", new String[] {"TABLE"})) {
            while (rs.next()) {
                String name = rs.getString("TABLE_NAME").toLowerCase(Locale.ROOT);
                if (name.startsWith("reads")) {
                    out.add(name);
                }
            }
        }
        return out;
    }
}
