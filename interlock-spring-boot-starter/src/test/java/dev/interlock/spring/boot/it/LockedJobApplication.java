package dev.interlock.spring.boot.it;

import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.beans.factory.annotation.Value;
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
 * Interlock configuration is properties. Each tick it appends to the file {@code it.log}:
 * {@code fired SECOND PID MILLIS} from an unlocked twin of the job (so the test knows which ticks
 * this instance fired) and {@code ran SECOND PID MILLIS} from the locked job. A {@link SimpleTracer} receives
 * the observations, as a tracing bridge would.
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

    /** The job, and its unlocked twin that proves this instance fired the tick. */
    public static class NightlyJob {
        private final Path log;

        NightlyJob(Path log) {
            this.log = log;
        }

        @Scheduled(cron = "* * * * * *")
        public void fired() {
            write("fired");
        }

        // lockAtLeastFor 500ms: the other instance fires the same tick within a few ms and finds it held; the next tick is
        // free unless this run started more than half a second late.
        @Scheduled(cron = "* * * * * *")
        @SchedulerLock(name = "nightly", lockAtLeastFor = "PT0.5S", lockAtMostFor = "PT10S")
        public void run() {
            write("ran");
        }

        private void write(String what) {
            long millis = System.currentTimeMillis();
            try {
                Files.writeString(log, what + " " + millis / 1000 + " " + ProcessHandle.current().pid() + " " + millis + "\n", StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND, StandardOpenOption.SYNC);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
