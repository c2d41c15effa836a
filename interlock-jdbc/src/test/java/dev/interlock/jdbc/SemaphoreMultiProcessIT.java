package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.SemaphoreChecker;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * K JVMs contend for a semaphore of N permits through a real server; the checker proves from
 * their own section logs that no instant had more than N inside, that every process got its
 * turns, and that tokens are unique and grow in grant order.
 */
class SemaphoreMultiProcessIT {
    @Test
    void postgres_fiveProcesses_onASemaphoreOfTwo(@TempDir Path work) throws Exception {
        String uri =
                TestServers.withOptions(TestServers.postgresUrl(), "table=" + TestServers.table() + "&create=true");
        List<SemaphoreChecker.Held> held = SemaphoreChecker.run(uri, "imports", 2, 5, 30, work);
        assertThat(held).hasSize(150);
    }

    @Test
    void mariadb_fiveProcesses_onASemaphoreOfTwo(@TempDir Path work) throws Exception {
        String uri = TestServers.withOptions(TestServers.mariadbUrl(), "table=" + TestServers.table() + "&create=true");
        List<SemaphoreChecker.Held> held = SemaphoreChecker.run(uri, "imports", 2, 5, 30, work);
        assertThat(held).hasSize(150);
    }
}
