package dev.interlock.jdbc;

/** The time rules on PostgreSQL. */
class PostgresSemanticsIT extends JdbcSemanticsContract {
    @Override
    protected String baseUrl() {
        return TestServers.postgresUrl();
    }
}
