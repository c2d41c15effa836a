package dev.interlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A real {@link SpringApplication} with a bad property: Boot finds {@link InterlockFailureAnalyzer}
 * through {@code META-INF/spring.factories} and prints its report (what is wrong, with the
 * property, and what to do) instead of a bean-creation stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class FailureReportTest {
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {}

    @Test
    void badProperty_applicationFailedToStart_reportNamesThePropertyAndTheAction(CapturedOutput output) {
        SpringApplication app = new SpringApplication(App.class);
        assertThatThrownBy(() -> app.run(
                        "--spring.main.web-application-type=none",
                        "--spring.main.banner-mode=off",
                        "--interlock.uri=mem:report",
                        "--interlock.redis.key-prefix=app:"))
                .isInstanceOf(RuntimeException.class);
        assertThat(output.toString())
                .contains("APPLICATION FAILED TO START")
                .contains("interlock.redis.key-prefix applies to redis: lock spaces, but interlock.uri is a mem: space")
                .contains("Remove interlock.redis.key-prefix, or point interlock.uri at a redis: space.");
    }
}
