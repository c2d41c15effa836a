package dev.interlock.spring.boot.it;

import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The application of {@link BootApplicationIT}: a plain Boot web application with the starter, the
 * actuator and one {@code @Scheduled} + {@code @SchedulerLock} job at every second. Its only
 * Interlock configuration is properties. For the checker in the test it appends to the file
 * {@code it.log} one line per lock attempt, {@code attempt TICK PID BEFORE AFTER granted|busy}
 * (wall-clock millis just before and just after ShedLock asked the auto-configured provider,
 * which a {@link BeanPostProcessor} wraps to see it), and {@code ran TICK PID MILLIS} per run of
 * the job. A {@link SimpleTracer} receives the observations, as a tracing bridge would.
 *
 * <p>Run in a second JVM with {@code main(--interlock.uri=... --it.log=...)}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@EnableScheduling
@EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
public class LockedJobApplication {
    public static void main(String[] args) {
        start(args);
    }

    public static ConfigurableApplicationContext start(String... args) {
        SpringApplication app = new SpringApplication(LockedJobApplication.class);
        return app.run(args);
    }

    @Bean
    SimpleTracer tracer() {
        return new SimpleTracer();
    }

    @Bean
    DefaultTracingObservationHandler tracingHandler(SimpleTracer tracer) {
        return new DefaultTracingObservationHandler(tracer);
    }

    @Bean
    NightlyJob nightlyJob(@Value("${it.log}") Path log) {
        return new NightlyJob(log);
    }

    /** Logs every attempt of the auto-configured LockProvider, which stays the one that decides. */
    @Bean
    static BeanPostProcessor attemptLogger(@Value("${it.log}") Path log) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                if (!(bean instanceof LockProvider provider)) {
                    return bean;
                }
                return (LockProvider) configuration -> {
                    long before = System.currentTimeMillis();
                    Optional<SimpleLock> lock = provider.lock(configuration);
                    long after = System.currentTimeMillis();
                    append(
                            log,
                            "attempt " + before / 1000 + " "
                                    + ProcessHandle.current().pid() + " " + before + " " + after + " "
                                    + (lock.isPresent() ? "granted" : "busy"));
                    return lock;
                };
            }
        };
    }

    static void append(Path log, String line) {
        try {
            Files.writeString(
                    log, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.SYNC);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The job. */
    public static class NightlyJob {
        private final Path log;

        NightlyJob(Path log) {
            this.log = log;
        }

        // lockAtLeastFor 500ms: an attempt of the other instance within half a second of the grant finds it held.
        @Scheduled(cron = "* * * * * *")
        @SchedulerLock(name = "nightly", lockAtLeastFor = "PT0.5S", lockAtMostFor = "PT10S")
        public void run() {
            long millis = System.currentTimeMillis();
            append(log, "ran " + millis / 1000 + " " + ProcessHandle.current().pid() + " " + millis);
        }
    }
}
