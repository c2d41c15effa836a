package dev.interlock.jdbc;

import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;
import java.sql.SQLException;
import org.mariadb.jdbc.MariaDbDataSource;

/**
 * The semaphore contract on MariaDB through an application's DataSource without
 * {@code allowMultiQueries}: a permit's try and release cannot be one text of statements there,
 * and run as the standard transactions instead (docs/jdbc.md, "Semaphores").
 */
class MariaDbOneStatementSemaphoreContractIT extends SemaphoreContract {
    private final String table = TestServers.table();

    @Override
    protected LockSpace openSpace() {
        try {
            MariaDbDataSource ds = new MariaDbDataSource(
                    JdbcUrls.split(TestServers.mariadbUrl()).driverUrl());
            return JdbcLockSpaces.open(
                    ds, JdbcOptions.builder().table(table).createTable(true).build());
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
