package dev.interlock.jdbc;

import java.sql.SQLException;
import javax.sql.DataSource;
import org.mariadb.jdbc.MariaDbDataSource;

/** The all-back permit grant's rules on MariaDB: one text of statements, its connections allowing them. */
class MariaDbPermitAllBackIT extends PermitAllBackContract {
    @Override
    DataSource dataSource() throws SQLException {
        return new MariaDbDataSource(
                JdbcUrls.split(TestServers.withOptions(TestServers.mariadbUrl(), "allowMultiQueries=true"))
                        .driverUrl());
    }

    @Override
    String aSecondAgo() {
        return "UTC_TIMESTAMP(6) - INTERVAL 1 SECOND";
    }
}
