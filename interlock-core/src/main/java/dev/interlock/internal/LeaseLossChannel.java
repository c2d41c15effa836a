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
    /** The last session deadline reported before the lease started; applied when it does. */
    private long lossPoint;

    private long expiry;
    private boolean deadlineReported;

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

    @Override
    public void sessionDeadline(long lossPointNanos, long expiryNanos) {
        DefaultLease l = lease;
        if (l == null) {
            synchronized (this) {
                l = lease;
                if (l == null) {
                    lossPoint = lossPointNanos;
                    expiry = expiryNanos;
                    deadlineReported = true;
                    return;
                }
            }
        }
        l.sessionDeadline(lossPointNanos, expiryNanos);
    }

    void attach(DefaultLease l) {
        String r;
        Throwable c;
        boolean d;
        long point;
        long end;
        synchronized (this) {
            lease = l;
            r = reason;
            c = cause;
            d = deadlineReported;
            point = lossPoint;
            end = expiry;
        }
        if (d) {
            l.sessionDeadline(point, end);
        }
        if (r != null) {
            l.lose(r, c);
        }
    }
}
