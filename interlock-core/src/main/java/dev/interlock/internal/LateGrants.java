package dev.interlock.internal;

import dev.interlock.LockBackendException;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Grant;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.support.LockNames;
import dev.interlock.spi.support.Log;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Grants that reach the caller too late to be used. The core counts a lease from before the try
 * that granted it (so that it never believes in a lease the backend has already ended); a try that
 * the backend answered only after a pause (a server stopped or overloaded, a slow network, this
 * process itself stopped) brings a lease that is partly or wholly spent by that count, and
 * {@code acquire()} used to return it already lost ({@code isValid()} false, the deadline seconds
 * in the past), or so close to its loss point that its first renewal came after it.
 *
 * <p>The rule: a renewed lease with more than a third gone when it arrives (its first renewal
 * would be due already), or a fixed lease past its loss point (four fifths gone), is released,
 * owner-checked, and the wait goes on, with a new acquisition. Kernel locks, which have no lease,
 * are never late, nor is a fixed lease shorter than {@link #MIN_JUDGED_FIXED_LEASE}: one that
 * short is spent by any try.
 */
final class LateGrants {
    private static final Log log = Log.of(LateGrants.class);

    private LateGrants() {}

    static final Duration MIN_JUDGED_FIXED_LEASE = Duration.ofMillis(100);

    /** True if {@code grant}, whose lease began {@code ageNanos} ago, came too late to hand to the caller. */
    static boolean tooLate(DefaultLockSpace space, Grant grant, Duration lease, boolean fixed, long ageNanos) {
        if (space.leaseKind(grant) != LeaseKind.RENEWED) {
            return false;
        }
        long nanos = lease.toNanos();
        if (fixed) {
            return lease.compareTo(MIN_JUDGED_FIXED_LEASE) >= 0 && ageNanos >= nanos - nanos / 5;
        }
        return ageNanos > nanos / 3;
    }

    /**
     * Releases {@code grant} (owner-checked: it frees nothing that another has taken since); a
     * release that fails leaves the lock to expire with its lease. Returns what to say of it if
     * the wait then runs out.
     */
    static String giveBack(DefaultLockSpace space, AcquireSpec spec, Grant grant, Duration lease, long ageNanos) {
        String why = "a grant came " + TimeUnit.NANOSECONDS.toMillis(ageNanos)
                + "ms after its try began, too late for a lease of " + lease.toMillis()
                + "ms (is the backend paused or overloaded?), and was given back";
        log.warn("{} - {}: {}; still waiting", space.description, LockNames.quote(spec.name()), why);
        try {
            grant.release();
        } catch (LockBackendException e) {
            log.warn(
                    "{} - {}: giving back a grant that came too late failed (it expires with its lease): {}",
                    space.description,
                    LockNames.quote(spec.name()),
                    e.getMessage());
        }
        return why;
    }
}
