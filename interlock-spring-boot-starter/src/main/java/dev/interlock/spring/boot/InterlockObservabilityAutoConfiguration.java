package dev.interlock.spring.boot;

import dev.interlock.LockMetrics;
import dev.interlock.micrometer.MicrometerLockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What the auto-configured lock space reports: its metrics ({@code interlock-micrometer}) in the
 * application's {@code MeterRegistry}, and its waits and holds as observations in the
 * application's {@code ObservationRegistry} ({@link ObservedLockSpace}). Both are bounded to the
 * first {@code interlock.metrics.tag-names} lock names. Runs before {@link InterlockAutoConfiguration},
 * which picks up the {@link LockMetrics} and {@link LockSpaceWrapper} beans made here, and after
 * Boot's own registries (named for Boot 4 and Boot 3).
 */
@AutoConfiguration(
        before = InterlockAutoConfiguration.class,
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration",
            "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"
        })
@EnableConfigurationProperties(InterlockProperties.class)
public class InterlockObservabilityAutoConfiguration {
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({MeterRegistry.class, MicrometerLockMetrics.class})
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnProperty(prefix = "interlock.metrics", name = "enabled", matchIfMissing = true)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(LockMetrics.class)
        MicrometerLockMetrics interlockLockMetrics(MeterRegistry registry, InterlockProperties properties) {
            return MicrometerLockMetrics.builder(registry)
                    .tagNames(LockSpaceSettings.tagNames(properties))
                    .build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnProperty(prefix = "interlock.observations", name = "enabled", matchIfMissing = true)
    static class Observations {
        @Bean
        LockSpaceWrapper interlockObservations(ObservationRegistry registry, InterlockProperties properties) {
            return space ->
                    new ObservedLockSpace(space, registry, new LockNameTags(LockSpaceSettings.tagNames(properties)));
        }
    }
}
