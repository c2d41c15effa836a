package dev.interlock.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.function.Supplier;

/** A UTC wall clock that tests set, jump or derive from something else (e.g. the real clock plus an offset). */
public final class FakeClock extends Clock {
    private final Supplier<Instant> source;
    private volatile Instant now;

    private FakeClock(Instant start, Supplier<Instant> source) {
        this.now = start;
        this.source = source;
    }

    /** A clock that shows {@code start} until {@link #set} or {@link #advance} moves it. */
    public static FakeClock at(Instant start) {
        return new FakeClock(start, null);
    }

    /** A clock that asks {@code source} at every reading. */
    public static FakeClock from(Supplier<Instant> source) {
        return new FakeClock(null, source);
    }

    public void set(Instant instant) {
        requireSettable();
        now = instant;
    }

    public void advance(Duration d) {
        requireSettable();
        now = now.plus(d);
    }

    private void requireSettable() {
        if (source != null) {
            throw new IllegalStateException(
                    "this clock reads its time from a supplier; use FakeClock.at(...) to set it");
        }
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }

    @Override
    public Instant instant() {
        return source != null ? source.get() : now;
    }
}
