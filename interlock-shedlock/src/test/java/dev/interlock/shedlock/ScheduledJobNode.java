package dev.interlock.shedlock;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * One application node for {@link SchedulerLockTwoJvmIT}: a Spring context with one
 * {@code @Scheduled} + {@code @SchedulerLock} job fired every 100 ms, its lock provider an
 * {@link InterlockLockProvider} on the URI given. Prints {@code attempt granted|busy} for every
 * lock attempt (so the test knows both nodes tried), and logs each run of the job as
 * {@code EX TOKEN ENTER EXIT} (monotonic nanos) for the exclusion checker.
 *
 * <p>Arguments: {@code URI LOG}. Runs until killed.
 */
public final class ScheduledJobNode {
    static String uri;
    static Path log;

    public static void main(String[] args) throws Exception {
        uri = args[0];
        log = Path.of(args[1]);
        try (AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(Config.class)) {
            System.out.println("started");
            new CountDownLatch(1).await(); // until the test kills this JVM
        }
    }

    @Configuration
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT1M")
    static class Config {
        @Bean(destroyMethod = "close")
        LockSpace lockSpace() {
            return Interlock.open(uri);
        }

        @Bean
        LockProvider lockProvider(LockSpace space) {
            LockProvider interlock = new InterlockLockProvider(space);
            return new LockProvider() {
                @Override
                public Optional<SimpleLock> lock(LockConfiguration c) {
                    Optional<SimpleLock> l = interlock.lock(c);
                    System.out.println("attempt " + (l.isPresent() ? "granted" : "busy"));
                    return l;
                }
            };
        }

        @Bean
        NightlyReport report() {
            return new NightlyReport();
        }
    }

    /** The job: meant to run once however many nodes fire it (lockAtLeastFor outlasts the test). */
    public static class NightlyReport {
        @Scheduled(fixedRate = 100)
        @SchedulerLock(name = "nightly-report", lockAtMostFor = "PT10M", lockAtLeastFor = "PT5M")
        public void run() {
            long enter = System.nanoTime();
            long token = InterlockShedLock.requireToken();
            long exit = System.nanoTime();
            try {
                Files.writeString(
                        log,
                        "EX " + token + " " + enter + " " + exit + "\n",
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND,
                        StandardOpenOption.SYNC);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
