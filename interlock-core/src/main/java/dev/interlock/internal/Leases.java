package dev.interlock.internal;

import dev.interlock.Lease;
import java.util.OptionalInt;

/** Internal API for the command-line tool: backend details of a lease that the public API hides. */
public final class Leases {
    private Leases() {}

    /** See {@link dev.interlock.spi.Grant#inheritableDescriptor()}; empty for leases of other implementations. */
    public static OptionalInt inheritableDescriptor(Lease lease) {
        return lease instanceof DefaultLease ? ((DefaultLease) lease).grant().inheritableDescriptor() : OptionalInt.empty();
    }
}
