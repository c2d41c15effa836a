package dev.interlock.mem;

import dev.interlock.spi.AcquireSpec;
import java.time.Instant;

/** One holder of a {@link MemoryBackend} name: its request, token, and lease end on the ticker. */
final class Holder {
    final AcquireSpec spec;
    final long token;
    final Instant since;
    long expires; // ticker nanos

    Holder(AcquireSpec spec, long token, Instant since, long expires) {
        this.spec = spec;
        this.token = token;
        this.since = since;
        this.expires = expires;
    }
}
