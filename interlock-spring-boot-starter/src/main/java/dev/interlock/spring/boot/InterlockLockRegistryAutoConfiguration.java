package dev.interlock.spring.boot;

import dev.interlock.LockSpace;
import dev.interlock.spring.InterlockLockRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Spring Integration's {@link LockRegistry} on the lock space, when Spring Integration and
 * {@code interlock-spring} are on the class path and the application has no {@code LockRegistry}
 * of its own.
 */
@AutoConfiguration(after = InterlockAutoConfiguration.class)
@ConditionalOnClass({LockRegistry.class, InterlockLockRegistry.class})
@ConditionalOnBean(LockSpace.class)
@EnableConfigurationProperties(InterlockProperties.class)
public class InterlockLockRegistryAutoConfiguration {
    /**
     * The bean in a nested class: the outer class has no member that names a Spring Integration
     * type, so that Spring can inspect it (as it does every bean definition when it evaluates
     * another auto-configuration's conditions) on a class path without Spring Integration.
     */
    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        @ConditionalOnMissingBean(LockRegistry.class)
        InterlockLockRegistry interlockLockRegistry(LockSpace space, InterlockProperties properties) {
            InterlockLockRegistry registry = new InterlockLockRegistry(space);
            InterlockProperties.Registry p = properties.getRegistry();
            LockSpaceSettings.checkPositive(LockSpaceSettings.TIME_TO_LIVE, p.getTimeToLive());
            if (p.getTimeToLive() != null) {
                registry.setDefaultTtl(p.getTimeToLive());
            }
            registry.setRenewInBackground(p.isRenewInBackground());
            return registry;
        }
    }
}
