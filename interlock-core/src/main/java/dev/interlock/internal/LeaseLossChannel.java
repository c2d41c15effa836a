package dev.interlock.internal;

import dev.interlock.spi.LossChannel;

/**
 * The {@link LossChannel} of one acquisition: reports made before the lease exists are kept
 * and applied when it starts; later ones declare the loss at once.
 */
final class LeaseLossChannel implements LossChannel {
    private volatile DefaultLease lease;
    private volatile String reason;
    private volatile Throwable cause;

    @Override
    public void lost(String why, Throwable error) {
        DefaultLease l = lease;
        if (l != null) {
            l.lose(why, error);
            return;
        }
        synchronized (this) {
            l = lease;
            if (l == null) {
                reason = why == null ? "the backend reported it lost" : why;
                cause = error;
                return;
            }
        }
        l.lose(why, error);
    }

    void attach(DefaultLease l) {
        String r;
        Throwable c;
        synchronized (this) {
            lease = l;
            r = reason;
            c = cause;
        }
        if (r != null) {
            l.lose(r, c);
        }
    }
}
