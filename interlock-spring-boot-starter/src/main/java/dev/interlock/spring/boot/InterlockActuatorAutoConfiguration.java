package dev.interlock.spring.boot;

import dev.interlock.LockSpace;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Actuator parts for the {@code LockSpace} bean (the auto-configured one or the application's):
 * the health indicator {@code interlock} ({@code management.health.interlock.enabled}) and the
 * read-only endpoint {@code locks} (expose it with {@code management.endpoints.web.exposure.include}).
 * The health indicator uses Boot 4's {@code spring-boot-health} API.
 */
@AutoConfiguration(after = InterlockAutoConfiguration.class)
@ConditionalOnBean(LockSpace.class)
public class InterlockActuatorAutoConfiguration {
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    @ConditionalOnEnabledHealthIndicator("interlock")
    static class HealthConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "interlockHealthIndicator")
        HealthIndicator interlockHealthIndicator(LockSpace space) {
            return new InterlockHealthIndicator(space);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    static class EndpointConfiguration {
        @Bean
        @ConditionalOnMissingBean
        LocksEndpoint interlockLocksEndpoint(LockSpace space) {
            return new LocksEndpoint(space);
        }
    }
}
