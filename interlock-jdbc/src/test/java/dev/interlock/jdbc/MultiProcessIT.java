package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several JVMs contend for one name through a real server; the checker proves from their logs that
 * no exclusive section overlapped any other, that tokens grew with acquisition order, and that
 * the lost-update counter lost no increment.
 */
class MultiProcessIT {
    @Test
    void postgres_mixedReadersAndWriters_exclude(@TempDir Path work) throws Exception {
        String uri =
                TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");
        ExclusionChecker.Report r = MultiProcessChecker.run(uri, "mp", "mixed", 4, 60, work);
        assertThat(r.exclusive()).isPositive();
    }

    @Test
    void mariadb_mixedReadersAndWriters_exclude(@TempDir Path work) throws Exception {
        String uri = TestServers.withOptions(TestServers.mariadbUrl(), "table=" + TestServers.table() + "&create=true");
        ExclusionChecker.Report r = MultiProcessChecker.run(uri, "mp", "mixed", 4, 40, work);
        assertThat(r.exclusive()).isPositive();
    }
}
