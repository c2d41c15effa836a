package dev.interlock.spring.boot.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.shedlock.InterlockLockProvider;
import dev.interlock.spring.boot.InterlockActuatorAutoConfiguration;
import dev.interlock.spring.boot.InterlockAutoConfiguration;
import dev.interlock.spring.boot.InterlockLockRegistryAutoConfiguration;
import dev.interlock.spring.boot.InterlockObservabilityAutoConfiguration;
import dev.interlock.spring.boot.InterlockShedLockAutoConfiguration;
import dev.interlock.spring.boot.LocksEndpoint;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.util.UUID;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanUtils;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.util.ClassUtils;

/**
 * The starter, built against Boot 4, on Spring Boot 3.5 (Spring Framework 6.2): the lock space
 * from properties or the DataSource, the ShedLock provider, metrics, observations, the locks
 * endpoint and the failure report work; the health indicator (Boot 4's health API) and the
 * Spring Integration registry (Spring Integration 7, Spring Framework 7) back off without failing
 * the start.
 */
class Boot35ContextTest {
    /**
     * The starter's auto-configurations imported by name, as an application's
     * {@code @EnableAutoConfiguration} does: their class-level conditions are then read from the
     * class files, so that a class missing from this class path (Spring Integration, Boot 4's
     * health API) makes its part back off instead of failing the start.
     */
    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration({
        InterlockObservabilityAutoConfiguration.class,
        InterlockAutoConfiguration.class,
        InterlockShedLockAutoConfiguration.class,
        InterlockLockRegistryAutoConfiguration.class,
        InterlockActuatorAutoConfiguration.class
    })
    static class Starter {}

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Starter.class);

    private static String mem() {
        return "mem:boot3-" + UUID.randomUUID();
    }

    @Test
    void runsOnBoot35() {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
    }

    @Test
    void memUri_spaceProviderEndpoint_noHealthNoRegistry() {
        runner.withPropertyValues("interlock.uri=" + mem()).run(ctx -> {
            assertThat(ctx)
                    .hasNotFailed()
                    .hasSingleBean(LockSpace.class)
                    .hasSingleBean(LockProvider.class)
                    .hasSingleBean(LocksEndpoint.class)
                    .doesNotHaveBean("interlockHealthIndicator")
                    .doesNotHaveBean("interlockLockRegistry");
            assertThat(ctx.getBean(InterlockLockProvider.class).space()).isSameAs(ctx.getBean(LockSpace.class));
        });
    }

    @Test
    void dataSource_isUsed() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:boot3-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        runner.withBean(DataSource.class, () -> ds)
                .withPropertyValues("interlock.jdbc.create-table=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    try (Lease lease =
                            ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow()) {
                        assertThat(lease.token()).isPositive();
                    }
                });
    }

    @Test
    void metricsAndObservations() {
        TestObservationRegistry observations = TestObservationRegistry.create();
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(ObservationRegistry.class, () -> observations)
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> {
                    ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow().close();
                    assertThat(ctx.getBean(MeterRegistry.class)
                                    .get("interlock.acquisitions")
                                    .counter()
                                    .count())
                            .isEqualTo(1.0);
                    TestObservationRegistryAssert.assertThat(observations)
                            .hasObservationWithNameEqualTo("interlock.lock.hold")
                            .that()
                            .hasLowCardinalityKeyValue("interlock.end", "released");
                });
    }

    @Test
    void badProperty_failureNamesIt() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.default-lease=0s")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    // The analyzer as Boot 3.5 finds it: through META-INF/spring.factories.
                    String name = SpringFactoriesLoader.forDefaultResourceLocation()
                            .load(
                                    FailureAnalyzer.class,
                                    SpringFactoriesLoader.ArgumentResolver.none(),
                                    SpringFactoriesLoader.FailureHandler.handleMessage((msg, e) -> {}))
                            .stream()
                            .map(a -> a.getClass().getName())
                            .filter(n -> n.startsWith("dev.interlock"))
                            .findFirst()
                            .orElseThrow();
                    FailureAnalyzer analyzer = (FailureAnalyzer) BeanUtils.instantiateClass(
                            ClassUtils.forName(name, getClass().getClassLoader()));
                    FailureAnalysis analysis = analyzer.analyze(ctx.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .contains("interlock.default-lease")
                            .contains("positive");
                });
    }
}
