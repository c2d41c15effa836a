package dev.interlock.jdbc;

import java.util.UUID;

/** The time rules on H2. */
class H2SemanticsTest extends JdbcSemanticsContract {
    private final String db = "s" + UUID.randomUUID().toString().replace("-", "");

    @Override
    protected String baseUrl() {
        return "jdbc:h2:mem:" + db + ";DB_CLOSE_DELAY=-1";
    }
}
