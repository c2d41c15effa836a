package dev.interlock.jdbc;

/** The time rules on MariaDB. */
class MariaDbSemanticsIT extends JdbcSemanticsContract {
    @Override
    protected String baseUrl() {
        return TestServers.mariadbUrl();
    }
}
