package dev.interlock.spi;

import dev.interlock.Option;
import dev.interlock.Ticker;
import dev.interlock.spi.support.Secrets;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;

/**
 * What a backend is opened with. Immutable; fields added in later versions come with defaults.
 */
public final class BackendConfig {
    private final String uri;
    private final String scheme;
    private final String location;
    private final Ticker ticker;
    private final Clock clock;
    private final Duration defaultLease;
    private final Map<Option<?>, Object> options;
    private final ThreadFactory threadFactory;

    private BackendConfig(Builder b) {
        this.uri = Objects.requireNonNull(b.uri, "uri");
        this.scheme = Objects.requireNonNull(b.scheme, "scheme");
        this.location = Objects.requireNonNull(b.location, "location");
        this.ticker = b.ticker != null ? b.ticker : Ticker.system();
        this.clock = b.clock != null ? b.clock : Clock.systemUTC();
        this.defaultLease = b.defaultLease != null ? b.defaultLease : Duration.ofSeconds(30);
        this.options = Map.copyOf(b.options);
        this.threadFactory = b.threadFactory;
    }

    /**
     * @deprecated use {@link #builder(String)}, which keeps working when fields are added
     */
    @Deprecated
    public BackendConfig(
            String uri, String scheme, String location, Ticker ticker, Clock clock, Duration defaultLease) {
        this(builder(uri).ticker(ticker).clock(clock).defaultLease(defaultLease));
    }

    /** A configuration for {@code uri} ({@code scheme:location}), with system clocks and a 30s default lease. */
    public static Builder builder(String uri) {
        return new Builder(uri);
    }

    /** The whole URI as the user gave it, password included: never put it in a message; see {@link #maskedUri()}. */
    public String uri() {
        return uri;
    }

    /** The URI with any password (user info, password-like query parameters) replaced by {@code ****}. */
    public String maskedUri() {
        return Secrets.mask(uri);
    }

    /** The scheme, lower case, without the colon. */
    public String scheme() {
        return scheme;
    }

    /** Everything after the first colon (a path, a JDBC URL, a host), password included. */
    public String location() {
        return location;
    }

    /** Monotonic time for every deadline. */
    public Ticker ticker() {
        return ticker;
    }

    /** Wall clock, for display only. */
    public Clock clock() {
        return clock;
    }

    /** Lease when a request sets none. */
    public Duration defaultLease() {
        return defaultLease;
    }

    /** A typed option given to {@code Interlock.builder(...).option(...)}, if any. */
    public <T> Optional<T> option(Option<T> key) {
        Object v = options.get(key);
        return v == null ? Optional.empty() : Optional.of(key.type().cast(v));
    }

    /** Makes the backend's own threads (listeners, watchers); null means the backend's default (daemon threads). */
    public ThreadFactory threadFactory() {
        return threadFactory;
    }

    @Override
    public String toString() {
        return "BackendConfig[" + maskedUri() + "]";
    }

    /** Builds a {@link BackendConfig}. */
    public static final class Builder {
        private final String uri;
        private final String scheme;
        private final String location;
        private Ticker ticker;
        private Clock clock;
        private Duration defaultLease;
        private final Map<Option<?>, Object> options = new HashMap<>();
        private ThreadFactory threadFactory;

        private Builder(String uri) {
            this.uri = Objects.requireNonNull(uri, "uri");
            int colon = uri.indexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("lock space URI '" + Secrets.mask(uri) + "' has no scheme");
            }
            this.scheme = uri.substring(0, colon).toLowerCase(Locale.ROOT);
            this.location = uri.substring(colon + 1);
        }

        public Builder ticker(Ticker ticker) {
            this.ticker = ticker;
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = clock;
            return this;
        }

        public Builder defaultLease(Duration defaultLease) {
            this.defaultLease = defaultLease;
            return this;
        }

        public <T> Builder option(Option<T> key, T value) {
            options.put(Objects.requireNonNull(key, "key"), key.type().cast(Objects.requireNonNull(value, "value")));
            return this;
        }

        /** All options at once (from {@code Interlock.builder}). */
        public Builder options(Map<Option<?>, Object> all) {
            options.putAll(all);
            return this;
        }

        public Builder threadFactory(ThreadFactory threadFactory) {
            this.threadFactory = threadFactory;
            return this;
        }

        public BackendConfig build() {
            return new BackendConfig(this);
        }
    }
}
