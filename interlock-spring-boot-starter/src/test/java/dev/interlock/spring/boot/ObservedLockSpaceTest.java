package dev.interlock.spring.boot;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.LockTimeoutException;
import dev.interlock.mem.MemoryBackend;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Waits and holds as observations, through the auto-configured space of an application that has an ObservationRegistry. */
class ObservedLockSpaceTest {
    private final TestObservationRegistry observations = TestObservationRegistry.create();
    private final String uri = "mem:observed-" + UUID.randomUUID();
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    InterlockObservabilityAutoConfiguration.class, InterlockAutoConfiguration.class))
            .withBean(ObservationRegistry.class, () -> observations)
            .withPropertyValues("interlock.uri=" + uri);

    @Test
    void acquireAndClose_waitAndHoldObserved_withNameModeAndToken() {
        runner.run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            long token;
            try (Lease lease = space.tryAcquire("nightly").orElseThrow()) {
                token = lease.token();
                assertThat(observations)
                        .hasObservationWithNameEqualTo(ObservedLockSpace.HOLD)
                        .that()
                        .hasBeenStarted()
                        .isNotStopped();
            }
            assertThat(observations)
                    .hasObservationWithNameEqualTo(ObservedLockSpace.WAIT)
                    .that()
                    .hasBeenStopped()
                    .hasLowCardinalityKeyValue("interlock.outcome", "acquired")
                    .hasLowCardinalityKeyValue("interlock.name", "nightly")
                    .hasLowCardinalityKeyValue("interlock.mode", "exclusive")
                    .hasLowCardinalityKeyValue("interlock.backend", "mem")
                    .hasHighCardinalityKeyValue("interlock.token", Long.toString(token));
            assertThat(observations)
                    .hasObservationWithNameEqualTo(ObservedLockSpace.HOLD)
                    .that()
                    .hasBeenStopped()
                    .hasLowCardinalityKeyValue("interlock.end", "released")
                    .hasHighCardinalityKeyValue("interlock.token", Long.toString(token))
                    .hasHighCardinalityKeyValue("interlock.lock", "nightly");
        });
    }

    @Test
    void busyTryAndTimeout_waitObservedWithOutcome_noHold() {
        runner.run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            try (Lease held = space.tryAcquire("busy").orElseThrow()) {
                observations.clear();
                assertThat(space.tryAcquire("busy")).isEmpty();
                assertThat(observations)
                        .hasNumberOfObservationsEqualTo(1)
                        .hasObservationWithNameEqualTo(ObservedLockSpace.WAIT)
                        .that()
                        .hasLowCardinalityKeyValue("interlock.outcome", "busy");
                observations.clear();
                assertThatThrownBy(() -> space.acquire("busy", Duration.ofMillis(20)))
                        .isInstanceOf(LockTimeoutException.class);
                assertThat(observations)
                        .hasNumberOfObservationsEqualTo(1)
                        .hasObservationWithNameEqualTo(ObservedLockSpace.WAIT)
                        .that()
                        .hasLowCardinalityKeyValue("interlock.outcome", "timeout")
                        .hasBeenStopped();
            }
        });
    }

    @Test
    void lostLease_holdEndsLost() {
        runner.run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            Lease lease = space.tryAcquire("taken").orElseThrow();
            MemoryBackend.of(uri.substring("mem:".length()))
                    .orElseThrow()
                    .reportLoss("taken", lease.owner().id(), "taken over in a test");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !lease.isValid());
            // The hold's observation is stopped by the loss listener, told on the space's notifier
            // thread just after the lease turned invalid.
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(observations)
                            .hasObservationWithNameEqualTo(ObservedLockSpace.HOLD)
                            .that()
                            .hasBeenStopped()
                            .hasLowCardinalityKeyValue("interlock.end", "lost")
                            .assertThatError()
                            .isNotNull());
            lease.close();
        });
    }

    @Test
    void namesBeyondTheBound_shareOther_likeTheMetrics() {
        runner.withPropertyValues("interlock.metrics.tag-names=1").run(ctx -> {
            LockSpace space = ctx.getBean(LockSpace.class);
            space.tryAcquire("order-1").orElseThrow().close();
            space.tryAcquire("order-2").orElseThrow().close();
            assertThat(observations)
                    .hasAnObservationWithAKeyValue("interlock.name", "order-1")
                    .hasAnObservationWithAKeyValue("interlock.name", LockNameTags.OTHER);
            assertThat(observations).hasAnObservationWithAKeyValue("interlock.lock", "order-2");
        });
    }

    @Test
    void observationsDisabled_spaceNotWrapped() {
        runner.withPropertyValues("interlock.observations.enabled=false").run(ctx -> {
            ctx.getBean(LockSpace.class).tryAcquire("job").orElseThrow().close();
            assertThat(observations).doesNotHaveAnyObservation();
        });
    }
}
