package dev.interlock.jdbc;

import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;

/** The all-back permit grant's rules on H2: the standard statements. */
class H2PermitAllBackTest extends PermitAllBackContract {
    @Override
    DataSource dataSource() {
        JdbcDataSource h2 = new JdbcDataSource();
        h2.setURL("jdbc:h2:mem:b" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
        return h2;
    }

    @Override
    String aSecondAgo() {
        return "DATEADD(SECOND, -1, CURRENT_TIMESTAMP(6))";
    }
}
