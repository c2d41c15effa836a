package dev.interlock.shedlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.LockSpace;
import dev.interlock.jdbc.JdbcLockSpaces;
import dev.interlock.jdbc.JdbcOptions;
import dev.interlock.testkit.Timing;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/** The "after" half of the README's migration from ShedLock's JDBC provider, as written there, on H2. */
class ReadmeMigrationTest {
    static final CopyOnWriteArrayList<Long> tokens = new CopyOnWriteArrayList<>();

    @Test
    void readmeBeans_runAScheduledJobWithAFencingToken() {
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(App.class)) {
            await().atMost(Timing.seconds(60)).until(() -> !tokens.isEmpty());
            assertThat(tokens.get(0)).isPositive();
            assertThat(ctx.getBean(LockSpace.class).status("readme-job").holders())
                    .as("lockAtLeastFor keeps it")
                    .isNotEmpty();
        }
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10M")
    static class App {
        @Bean
        DataSource dataSource() {
            JdbcDataSource ds = new JdbcDataSource();
            ds.setURL("jdbc:h2:mem:readme" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
            return ds;
        }

        // --- as in the README
        @Bean(destroyMethod = "close")
        LockSpace lockSpace(DataSource ds) {
            return JdbcLockSpaces.open(
                    ds,
                    JdbcOptions.builder()
                            .table("interlock_locks")
                            .createTable(true)
                            .build());
        }

        @Bean
        LockProvider lockProvider(LockSpace locks) {
            return new InterlockLockProvider(locks);
        }
        // ---

        @Bean
        Job job() {
            return new Job();
        }
    }

    public static class Job {
        @Scheduled(fixedRate = 50)
        @SchedulerLock(name = "readme-job", lockAtLeastFor = "PT5M")
        public void run() {
            tokens.add(InterlockShedLock.requireToken());
        }
    }
}
