package dev.interlock.internal;

import dev.interlock.Lease;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.Ticker;
import dev.interlock.spi.LeaseKind;
import dev.interlock.spi.support.ProcessIdentity;
import java.time.Duration;
import java.util.function.LongConsumer;

/**
 * Internal API for the command-line tool: backend details of a lease that the public API hides,
 * and the supervision hooks of {@code interlock run}.
 */
public final class Leases {
    private Leases() {}

    /** The shortest lease that may be renewed in the background (a fixed one may be shorter). */
    public static final Duration MIN_RENEWED_LEASE = DefaultLockRequest.MIN_RENEWED_LEASE;

    /** True if the space's locks expire unless renewed, so they die with this JVM. */
    public static boolean leaseBased(LockSpace space) {
        return space instanceof DefaultLockSpace && ((DefaultLockSpace) space).leaseKind != LeaseKind.NONE;
    }

    /** The lease of requests that do not set one. */
    public static Duration defaultLease(LockSpace space) {
        return ((DefaultLockSpace) space).defaultLease;
    }

    /**
     * Makes {@code request} hold its lock on behalf of process {@code pid} of this host (started
     * at {@code startTicks}, see {@link ProcessIdentity#startTicks(long)}): the owner names that
     * process, so backends that judge holders by their process ({@code dir:}) keep the lock while
     * it, or any process of the group it leads, lives. {@code interlock run} names its sentinel,
     * the leader of the command's process group.
     */
    public static LockRequest onBehalfOf(LockRequest request, long pid, long startTicks) {
        ((DefaultLockRequest) request).onBehalfOf(pid, startTicks);
        return request;
    }

    /**
     * Calls {@code listener} with the lease's deadline on {@link #ticker(Lease)} now and after
     * every renewal (on the renewing thread; it must not block).
     */
    public static void onRenewed(Lease lease, LongConsumer listener) {
        ((DefaultLease) lease).onRenewed(listener);
    }

    /** True if the lease is held by a backend session ({@code zk:}) rather than renewed or kept by the kernel. */
    public static boolean sessionHeld(Lease lease) {
        return lease instanceof DefaultLease && ((DefaultLease) lease).sessionHeld();
    }

    /** The monotonic clock the lease's deadline is kept on. */
    public static Ticker ticker(Lease lease) {
        return ((DefaultLease) lease).space().ticker;
    }

    /** How long before its deadline a lease whose renewals keep failing is declared lost. */
    public static long lossMarginNanos(Lease lease) {
        return ((DefaultLease) lease).lossMarginNanos();
    }

    /** The lease duration of a lease-based lease. */
    public static Duration leaseDuration(Lease lease) {
        return ((DefaultLease) lease).leaseDuration();
    }
}
