package dev.interlock.spring.boot;

import dev.interlock.LockSpace;
import dev.interlock.shedlock.InterlockLockProvider;
import net.javacrumbs.shedlock.core.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * ShedLock's {@link LockProvider} on the lock space, when ShedLock and {@code interlock-shedlock}
 * are on the class path and the application has no {@code LockProvider} of its own. Leases are
 * fixed to {@code lockAtMostFor} (ShedLock's contract) unless
 * {@code interlock.shedlock.renew-in-background=true}.
 */
@AutoConfiguration(after = InterlockAutoConfiguration.class)
@ConditionalOnClass({LockProvider.class, InterlockLockProvider.class})
@ConditionalOnBean(LockSpace.class)
@EnableConfigurationProperties(InterlockProperties.class)
public class InterlockShedLockAutoConfiguration {
    /** The bean in a nested class, so that the outer class names no ShedLock type (see {@link InterlockLockRegistryAutoConfiguration}). */
    @Configuration(proxyBeanMethods = false)
    static class Provider {
        @Bean
        @ConditionalOnMissingBean(LockProvider.class)
        InterlockLockProvider interlockShedLockProvider(LockSpace space, InterlockProperties properties) {
            InterlockLockProvider provider = new InterlockLockProvider(space);
            return properties.getShedlock().isRenewInBackground() ? provider.renewingInBackground() : provider;
        }
    }
}
