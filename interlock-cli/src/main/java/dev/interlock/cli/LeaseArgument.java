package dev.interlock.cli;

import dev.interlock.LockRequest;
import dev.interlock.internal.Leases;
import dev.interlock.spi.support.Durations;
import java.time.Duration;

/**
 * The {@code --lease} of {@code run} and {@code update}: both renew the lease while COMMAND runs,
 * so a lease too short to be renewed is refused on every backend, kernel ones included, and a
 * script means the same whatever backend it is pointed at.
 */
final class LeaseArgument {
    private LeaseArgument() {}

    /**
     * Sets {@code lease} on {@code request}.
     *
     * @throws IllegalArgumentException with the message to show after "bad --lease: "
     */
    static void apply(LockRequest request, Duration lease) {
        if (lease.compareTo(Leases.MIN_RENEWED_LEASE) < 0) {
            throw new IllegalArgumentException("the lease is renewed while COMMAND runs and must be at least "
                    + Leases.MIN_RENEWED_LEASE.toMillis() + "ms, was " + Durations.format(lease));
        }
        request.lease(lease);
    }
}
