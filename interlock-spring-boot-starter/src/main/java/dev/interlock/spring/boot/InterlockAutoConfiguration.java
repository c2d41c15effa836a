package dev.interlock.spring.boot;

import dev.interlock.LockMetrics;
import dev.interlock.LockSpace;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The {@link LockSpace} bean: opened from {@code interlock.uri} (any backend on the class path),
 * or on the application's {@code DataSource} when the URI is a bare {@code jdbc:} or absent and
 * a DataSource exists. Metrics and observations are added when the application has a
 * {@code MeterRegistry} / {@code ObservationRegistry} ({@link InterlockObservabilityAutoConfiguration}).
 * Backs off if the application defines its own {@code LockSpace}; with neither a URI nor a
 * DataSource it configures nothing.
 *
 * <p>Ordered after the auto-configurations that make the DataSource, the meter registry and the
 * observation registry, named as strings for both Boot 4 and Boot 3 package names.
 */
@AutoConfiguration(
        afterName = {
            "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
            "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"
        })
@EnableConfigurationProperties(InterlockProperties.class)
public class InterlockAutoConfiguration {
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockSpace.class)
    @Conditional(UriOrDataSource.class)
    LockSpace interlockLockSpace(
            InterlockProperties properties,
            ObjectProvider<DataSource> dataSource,
            ObjectProvider<LockMetrics> metrics,
            ObjectProvider<LockSpaceWrapper> wrappers) {
        LockSpace space = new LockSpaceSettings(properties)
                .open(dataSource.getIfUnique(), metrics.getIfUnique(() -> LockMetrics.NONE));
        for (LockSpaceWrapper wrapper : (Iterable<LockSpaceWrapper>) wrappers.orderedStream()::iterator) {
            space = wrapper.wrap(space);
        }
        return space;
    }

    /** There is something to open: {@code interlock.uri} is set, or a DataSource exists. */
    static final class UriOrDataSource extends AnyNestedCondition {
        UriOrDataSource() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnProperty(prefix = "interlock", name = "uri")
        static final class UriSet {}

        @ConditionalOnBean(DataSource.class)
        static final class DataSourceExists {}
    }
}
