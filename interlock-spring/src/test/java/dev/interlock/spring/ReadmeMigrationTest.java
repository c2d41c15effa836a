package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.LockSpace;
import dev.interlock.jdbc.JdbcLockSpaces;
import dev.interlock.jdbc.JdbcOptions;
import dev.interlock.spring.InterlockLockRegistry.InterlockLock;
import java.util.UUID;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/** The "after" half of the README's migration from JdbcLockRegistry, as written there, in a Spring context on H2. */
class ReadmeMigrationTest {
    @Test
    void readmeBeans_giveARegistryWhoseLocksCarryAFencingToken_andCloseReleases() throws Exception {
        InterlockLock left;
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(App.class)) {
            @SuppressWarnings("unchecked")
            LockRegistry<InterlockLock> registry = ctx.getBean(LockRegistry.class);
            LockSpace space = ctx.getBean(LockSpace.class);
            long token = registry.executeLocked(
                    "readme-job",
                    () -> registry.obtain("readme-job").lease().orElseThrow().token());
            assertThat(token).isPositive();
            assertThat(space.status("readme-job").isFree()).isTrue();
            left = registry.obtain("left-held");
            left.lock();
            assertThat(space.status("left-held").isFree()).isFalse();
        }
        assertThat(left.lease().orElseThrow().isValid())
                .as("the context's shutdown closed the space, which released it")
                .isFalse();
    }

    @Configuration
    static class App {
        @Bean
        DataSource dataSource() {
            JdbcDataSource ds = new JdbcDataSource();
            ds.setURL("jdbc:h2:mem:readme" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
            return ds;
        }

        // --- as in the README
        @Bean(destroyMethod = "close")
        LockSpace lockSpace(DataSource ds) { // releases what is still held
            return JdbcLockSpaces.open(
                    ds,
                    JdbcOptions.builder().table("app_locks").createTable(true).build());
        }

        @Bean
        InterlockLockRegistry lockRegistry(LockSpace space) {
            return new InterlockLockRegistry(space); // keys are lock names (Strings)
        }
        // ---
    }
}
