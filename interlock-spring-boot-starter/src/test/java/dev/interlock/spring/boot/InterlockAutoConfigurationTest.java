package dev.interlock.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.shedlock.InterlockLockProvider;
import dev.interlock.spring.InterlockLockRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.LockRegistry;

/** Every condition of the auto-configuration, on ApplicationContextRunner (no server, no web). */
class InterlockAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    InterlockObservabilityAutoConfiguration.class,
                    InterlockAutoConfiguration.class,
                    InterlockShedLockAutoConfiguration.class,
                    InterlockLockRegistryAutoConfiguration.class,
                    InterlockActuatorAutoConfiguration.class));

    private static String mem() {
        return "mem:boot-" + UUID.randomUUID();
    }

    private static JdbcDataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:boot-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    // ------------------------------------------------------------------ the LockSpace, per backend family

    @Test
    void memUri_givesLockSpaceProviderAndRegistryOnIt() {
        String uri = mem();
        runner.withPropertyValues("interlock.uri=" + uri).run(ctx -> {
            assertThat(ctx)
                    .hasNotFailed()
                    .hasSingleBean(LockSpace.class)
                    .hasSingleBean(LockProvider.class)
                    .hasSingleBean(LockRegistry.class);
            LockSpace space = ctx.getBean(LockSpace.class);
            assertThat(space.uri()).isEqualTo(uri);
            assertThat(ctx.getBean(InterlockLockProvider.class).space()).isSameAs(space);
            assertThat(ctx.getBean(InterlockLockRegistry.class).space()).isSameAs(space);
            assertThat(ctx.getBean(InterlockLockProvider.class).renewsInBackground())
                    .isFalse();
        });
    }

    @Test
    void flockUri_onTempDir_locksThere(@TempDir Path dir) {
        runner.withPropertyValues("interlock.uri=flock:" + dir).run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            assertThat(space.uri()).startsWith("flock:");
            try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                assertThat(Interlock.open("flock:" + dir).tryAcquire("job")).isEmpty();
            }
        });
    }

    @Test
    void dirUri_onTempDir_locksThere(@TempDir Path dir) {
        runner.withPropertyValues("interlock.uri=dir:" + dir).run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            assertThat(space.uri()).startsWith("dir:");
            try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                assertThat(space.status("job").holders()).hasSize(1);
            }
        });
    }

    @Test
    void jdbcUri_h2_withTableProperties_createsThatTable() {
        String url = "jdbc:h2:mem:boot-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
        runner.withPropertyValues(
                        "interlock.uri=" + url, "interlock.jdbc.table=app_locks", "interlock.jdbc.create-table=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    LockSpace space = ctx.getBean(LockSpace.class);
                    assertThat(space.uri()).contains("app_locks");
                    try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                        assertThat(space.status("job").holders()).hasSize(1);
                    }
                });
    }

    @Test
    void jdbcUri_sqlite_onTempFile(@TempDir Path dir) {
        runner.withPropertyValues(
                        "interlock.uri=jdbc:sqlite:" + dir.resolve("locks.db"), "interlock.jdbc.create-table=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    try (Lease lease =
                            ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow()) {
                        assertThat(lease.token()).isPositive();
                    }
                });
    }

    @Test
    void noUri_withDataSource_usesTheApplicationsDataSource() {
        JdbcDataSource ds = h2();
        runner.withBean(DataSource.class, () -> ds)
                .withPropertyValues("interlock.jdbc.create-table=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    LockSpace space = ctx.getBean(LockSpace.class);
                    try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                        // The lock is a row of the application's own database.
                        assertThat(Interlock.builder("jdbc:")
                                        .option(dev.interlock.jdbc.JdbcLockBackend.DATA_SOURCE, ds)
                                        .open()
                                        .tryAcquire("job"))
                                .isEmpty();
                    }
                });
    }

    @Test
    void bareJdbcUriWithOptions_withDataSource_usesItWithThoseOptions() {
        JdbcDataSource ds = h2();
        runner.withBean(DataSource.class, () -> ds)
                .withPropertyValues("interlock.uri=jdbc:?table=job_locks&create=true")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    assertThat(ctx.getBean(LockSpace.class).uri()).contains("job_locks");
                });
    }

    @Test
    void neitherUriNorDataSource_configuresNothing() {
        runner.run(ctx -> assertThat(ctx)
                .hasNotFailed()
                .doesNotHaveBean(LockSpace.class)
                .doesNotHaveBean(LockProvider.class)
                .doesNotHaveBean(LockRegistry.class)
                .doesNotHaveBean(HealthIndicator.class));
    }

    // ------------------------------------------------------------------ adapters present or absent

    @Test
    void withoutShedLock_noLockProvider_registryStill() {
        runner.withClassLoader(new FilteredClassLoader(LockProvider.class))
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> assertThat(ctx)
                        .hasNotFailed()
                        .hasSingleBean(LockSpace.class)
                        .doesNotHaveBean("interlockShedLockProvider")
                        .hasSingleBean(LockRegistry.class));
    }

    @Test
    void withoutInterlockShedLockModule_noLockProvider() {
        runner.withClassLoader(new FilteredClassLoader(InterlockLockProvider.class))
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean("interlockShedLockProvider"));
    }

    @Test
    void withoutSpringIntegration_noRegistry_providerStill() {
        runner.withClassLoader(new FilteredClassLoader(LockRegistry.class))
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> assertThat(ctx)
                        .hasNotFailed()
                        .doesNotHaveBean("interlockLockRegistry")
                        .hasSingleBean(LockProvider.class));
    }

    @Test
    void shedLockRenewInBackground_property_givesRenewingProvider() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.shedlock.renew-in-background=true")
                .run(ctx -> assertThat(ctx.getBean(InterlockLockProvider.class).renewsInBackground())
                        .isTrue());
    }

    @Test
    void shedLockProvider_locksInTheSpace() {
        runner.withPropertyValues("interlock.uri=" + mem()).run(ctx -> {
            LockProvider provider = ctx.getBean(LockProvider.class);
            Optional<SimpleLock> lock = provider.lock(
                    new LockConfiguration(java.time.Instant.now(), "nightly", Duration.ofSeconds(30), Duration.ZERO));
            assertThat(lock).isPresent();
            assertThat(ctx.getBean(LockSpace.class).status("nightly").holders()).hasSize(1);
            lock.get().unlock();
        });
    }

    // ------------------------------------------------------------------ the application's own beans win

    @Test
    void userLockSpace_isUsed_andAdaptersUseIt() {
        LockSpace own = Interlock.open(mem());
        runner.withBean("myLocks", LockSpace.class, () -> own)
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(LockSpace.class);
                    assertThat(ctx.getBean(LockSpace.class)).isSameAs(own);
                    assertThat(ctx.getBean(InterlockLockProvider.class).space()).isSameAs(own);
                    assertThat(ctx).hasSingleBean(HealthIndicator.class);
                });
    }

    @Test
    void userLockProviderAndRegistry_areKept() {
        LockProvider provider = c -> Optional.empty();
        LockRegistry registry = new InterlockLockRegistry(Interlock.open(mem()));
        runner.withBean(LockProvider.class, () -> provider)
                .withBean(LockRegistry.class, () -> registry)
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> {
                    assertThat(ctx.getBean(LockProvider.class)).isSameAs(provider);
                    assertThat(ctx.getBean(LockRegistry.class)).isSameAs(registry);
                });
    }

    @Test
    void registryProperties_reachTheRegistry() {
        runner.withPropertyValues(
                        "interlock.uri=" + mem(),
                        "interlock.registry.time-to-live=5s",
                        "interlock.registry.renew-in-background=false")
                .run(ctx -> {
                    InterlockLockRegistry registry = ctx.getBean(InterlockLockRegistry.class);
                    InterlockLockRegistry.InterlockLock lock = registry.obtain("job");
                    lock.lock();
                    try {
                        Lease lease = lock.lease().orElseThrow();
                        // 5 s, fixed: the lease ends about 5 s after it was taken, not 30 s.
                        assertThat(Duration.between(lease.acquiredAt(), lease.validUntil()))
                                .isBetween(Duration.ofSeconds(4), Duration.ofSeconds(6));
                    } finally {
                        lock.unlock();
                    }
                });
    }

    @Test
    void defaultLease_property_isTheSpacesDefault() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.default-lease=7s")
                .run(ctx -> {
                    try (Lease lease =
                            ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow()) {
                        assertThat(Duration.between(lease.acquiredAt(), lease.validUntil()))
                                .isBetween(Duration.ofSeconds(6), Duration.ofSeconds(8));
                    }
                });
    }

    // ------------------------------------------------------------------ bad properties: a failure that names the
    // property

    private static String failureText(AssertableApplicationContext ctx) {
        assertThat(ctx).hasFailed();
        FailureAnalysis analysis = new InterlockFailureAnalyzer().analyze(ctx.getStartupFailure());
        assertThat(analysis)
                .as("the failure analyzer recognises %s", ctx.getStartupFailure())
                .isNotNull();
        return analysis.getDescription() + "\n" + analysis.getAction();
    }

    @Test
    void nonPositiveDefaultLease_failsNamingTheProperty() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.default-lease=0s")
                .run(ctx -> assertThat(failureText(ctx))
                        .contains("interlock.default-lease")
                        .contains("positive"));
    }

    @Test
    void unknownScheme_failsNamingTheUriProperty() {
        runner.withPropertyValues("interlock.uri=nosuch:/x")
                .run(ctx -> assertThat(failureText(ctx))
                        .contains("interlock.uri")
                        .contains("nosuch")
                        .doesNotContain("Exception"));
    }

    @Test
    void tableOnANonJdbcSpace_failsNamingTheTableProperty() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.jdbc.table=app_locks")
                .run(ctx -> assertThat(failureText(ctx))
                        .contains("interlock.jdbc.table")
                        .contains("jdbc:"));
    }

    @Test
    void tableInUriAndProperty_failsNamingBoth() {
        runner.withBean(DataSource.class, InterlockAutoConfigurationTest::h2)
                .withPropertyValues("interlock.uri=jdbc:?table=a", "interlock.jdbc.table=b")
                .run(ctx -> assertThat(failureText(ctx))
                        .contains("interlock.jdbc.table")
                        .contains("interlock.uri"));
    }

    @Test
    void badTableName_failsNamingTheTableProperty() {
        runner.withBean(DataSource.class, InterlockAutoConfigurationTest::h2)
                .withPropertyValues("interlock.jdbc.table=no such table")
                .run(ctx -> assertThat(failureText(ctx)).contains("interlock.jdbc.table"));
    }

    @Test
    void bareJdbcWithoutDataSource_failsSayingWhatToDo() {
        runner.withPropertyValues("interlock.uri=jdbc:")
                .run(ctx ->
                        assertThat(failureText(ctx)).contains("interlock.uri").contains("DataSource"));
    }

    @Test
    void missingTable_withoutCreate_failsSayingHowToCreateIt() {
        runner.withBean(DataSource.class, InterlockAutoConfigurationTest::h2)
                .run(ctx ->
                        assertThat(failureText(ctx)).contains("interlock.uri").contains("interlock.jdbc.create-table"));
    }

    @Test
    void negativeTagNames_failsNamingTheProperty() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("interlock.uri=" + mem(), "interlock.metrics.tag-names=-1")
                .run(ctx -> assertThat(failureText(ctx)).contains("interlock.metrics.tag-names"));
    }

    @Test
    void nonPositiveRegistryTimeToLive_failsNamingTheProperty() {
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.registry.time-to-live=-1s")
                .run(ctx -> assertThat(failureText(ctx)).contains("interlock.registry.time-to-live"));
    }

    @Test
    void passwordInUri_neverInTheFailure() {
        runner.withPropertyValues("interlock.uri=jdbc:postgresql://app:s3cret@127.0.0.1:1/app?password=s3cret")
                .run(ctx -> {
                    String text = failureText(ctx);
                    assertThat(text).contains("interlock.uri").doesNotContain("s3cret");
                });
    }

    @Test
    void unparsableDuration_failsNamingTheProperty() {
        // Boot's own binder reports it (with the property and the value); the space is never opened.
        runner.withPropertyValues("interlock.uri=" + mem(), "interlock.default-lease=soon")
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("soon");
                    assertThat(ctx.getStartupFailure()).hasMessageContaining("interlock");
                });
    }

    // ------------------------------------------------------------------ IDE metadata

    @Test
    void configurationMetadata_listsEveryPropertyWithItsDescription() throws Exception {
        String json;
        try (var in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the configuration processor ran").isNotNull();
            json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        for (String property : List.of(
                "interlock.uri",
                "interlock.default-lease",
                "interlock.jdbc.table",
                "interlock.jdbc.create-table",
                "interlock.redis.key-prefix",
                "interlock.shedlock.renew-in-background",
                "interlock.registry.time-to-live",
                "interlock.registry.renew-in-background",
                "interlock.metrics.enabled",
                "interlock.metrics.tag-names",
                "interlock.observations.enabled")) {
            assertThat(json).contains("\"name\": \"" + property + "\"");
        }
        assertThat(json).contains("the application's DataSource");
    }

    // ------------------------------------------------------------------ metrics, health, endpoint

    @Test
    void meterRegistry_getsTheSpacesMetrics() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("interlock.uri=" + mem())
                .run(ctx -> {
                    ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow().close();
                    MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                    assertThat(registry.get("interlock.acquisitions")
                                    .tag("name", "job")
                                    .counter()
                                    .count())
                            .isEqualTo(1.0);
                    assertThat(registry.get("interlock.hold")
                                    .tag("end", "released")
                                    .timer()
                                    .count())
                            .isEqualTo(1);
                });
    }

    @Test
    void metricsDisabled_noMetrics() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("interlock.uri=" + mem(), "interlock.metrics.enabled=false")
                .run(ctx -> {
                    ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow().close();
                    assertThat(ctx.getBean(MeterRegistry.class)
                                    .find("interlock.acquisitions")
                                    .counters())
                            .isEmpty();
                });
    }

    @Test
    void health_upWithDetails_downWithReasonWhenCut_upAgain() {
        String uri = mem();
        runner.withPropertyValues("interlock.uri=" + uri).run(ctx -> {
            HealthIndicator health = ctx.getBean("interlockHealthIndicator", HealthIndicator.class);
            LockSpace space = ctx.getBean(LockSpace.class);
            try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                Health up = health.health();
                assertThat(up.getStatus()).isEqualTo(Status.UP);
                assertThat(up.getDetails()).containsEntry("uri", uri).containsEntry("held", 1L);
                MemoryBackend backend =
                        MemoryBackend.of(uri.substring("mem:".length())).orElseThrow();
                backend.cut();
                Health down = health.health();
                assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                assertThat((String) down.getDetails().get("reason")).contains("cut off");
                backend.restore();
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            }
        });
    }

    @Test
    void passwordInUri_maskedInHealthAndEndpoint() {
        String url = "jdbc:h2:mem:boot-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1;USER=sa;PASSWORD=s3cret?create=true";
        runner.withPropertyValues("interlock.uri=" + url).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            Health health = ctx.getBean("interlockHealthIndicator", HealthIndicator.class)
                    .health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails().toString()).contains("****").doesNotContain("s3cret");
            assertThat(ctx.getBean(LocksEndpoint.class).locks().toString())
                    .contains("****")
                    .doesNotContain("s3cret");
        });
    }

    @Test
    void healthDisabled_noIndicator() {
        runner.withPropertyValues("interlock.uri=" + mem(), "management.health.interlock.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean("interlockHealthIndicator"));
    }

    @Test
    void locksEndpoint_listsHoldersReadOnly() {
        runner.withPropertyValues("interlock.uri=" + mem()).run(ctx -> {
            LocksEndpoint endpoint = ctx.getBean(LocksEndpoint.class);
            LockSpace space = ctx.getBean(LockSpace.class);
            try (Lease lease = space.tryAcquire("job").orElseThrow()) {
                Map<String, Object> all = endpoint.locks();
                assertThat(all.get("uri")).isEqualTo(space.uri());
                @SuppressWarnings("unchecked")
                List<Map<String, Object>> locks = (List<Map<String, Object>>) all.get("locks");
                assertThat(locks)
                        .singleElement()
                        .satisfies(l -> assertThat(l.get("name")).isEqualTo("job"));
                @SuppressWarnings("unchecked")
                List<Map<String, Object>> holders =
                        (List<Map<String, Object>>) endpoint.lock("job").get("holders");
                assertThat(holders).singleElement().satisfies(h -> {
                    assertThat(h.get("owner")).isEqualTo(lease.owner().id());
                    assertThat(h.get("token")).isEqualTo(lease.token());
                });
                assertThat(space.status("job").holders()).hasSize(1); // still held: the endpoint took nothing
            }
        });
    }
}
