package dev.interlock.jdbc;

import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** The all-back permit grant's rules on PostgreSQL: one statement, which also makes a new name's row. */
class PostgresPermitAllBackIT extends PermitAllBackContract {
    @Override
    DataSource dataSource() {
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setURL(JdbcUrls.split(TestServers.postgresUrl()).driverUrl());
        return pg;
    }

    @Override
    String aSecondAgo() {
        return "now() - interval '1 second'";
    }
}
