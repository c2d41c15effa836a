package dev.interlock;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One holder of a lock as a backend sees it, for {@code status} and for error messages.
 * Fields a backend cannot know are empty: a util-linux {@code flock(1)} holder has a pid but no
 * owner id or token. A backend that keeps a queue describes its queued waiters the same way,
 * with {@link #waiting()} true.
 *
 * <p>Immutable. Backends build one with {@link #builder(Mode)}; fields added in later versions
 * get a builder method and a default, so existing backends keep compiling and running.
 */
public final class HolderInfo {
    private final Mode mode;
    private final Optional<String> ownerId;
    private final Optional<String> host;
    private final long pid;
    private final Optional<Instant> since;
    private final Optional<Instant> validUntil;
    private final OptionalLong token;
    private final Optional<Duration> lease;
    private final Optional<String> bootId;
    private final boolean waiting;

    private HolderInfo(Builder b) {
        this.mode = b.mode;
        this.ownerId = Optional.ofNullable(b.ownerId);
        this.host = Optional.ofNullable(b.host);
        this.pid = b.pid;
        this.since = Optional.ofNullable(b.since);
        this.validUntil = Optional.ofNullable(b.validUntil);
        this.token = b.token;
        this.lease = Optional.ofNullable(b.lease);
        this.bootId = Optional.ofNullable(b.bootId);
        this.waiting = b.waiting;
    }

    /**
     * All fields at once (the form of version 0.1).
     *
     * @deprecated use {@link #builder(Mode)}, which keeps working when fields are added
     */
    @Deprecated
    public HolderInfo(
            Mode mode,
            Optional<String> ownerId,
            Optional<String> host,
            long pid,
            Optional<Instant> since,
            Optional<Instant> validUntil,
            OptionalLong token,
            Optional<Duration> lease,
            Optional<String> bootId,
            boolean waiting) {
        this(builder(mode)
                .ownerId(ownerId.orElse(null))
                .host(host.orElse(null))
                .pid(pid)
                .since(since.orElse(null))
                .validUntil(validUntil.orElse(null))
                .token(token)
                .lease(lease.orElse(null))
                .bootId(bootId.orElse(null))
                .waiting(waiting));
    }

    /**
     * A holder (not a waiter).
     *
     * @deprecated use {@link #builder(Mode)}
     */
    @Deprecated
    public HolderInfo(
            Mode mode,
            Optional<String> ownerId,
            Optional<String> host,
            long pid,
            Optional<Instant> since,
            Optional<Instant> validUntil,
            OptionalLong token,
            Optional<Duration> lease,
            Optional<String> bootId) {
        this(mode, ownerId, host, pid, since, validUntil, token, lease, bootId, false);
    }

    /**
     * A holder with no lease and no recorded boot id (kernel locks).
     *
     * @deprecated use {@link #builder(Mode)}
     */
    @Deprecated
    public HolderInfo(
            Mode mode,
            Optional<String> ownerId,
            Optional<String> host,
            long pid,
            Optional<Instant> since,
            Optional<Instant> validUntil,
            OptionalLong token) {
        this(mode, ownerId, host, pid, since, validUntil, token, Optional.empty(), Optional.empty(), false);
    }

    /** Starts describing a holder (or a queued waiter) in {@code mode}; every other field is unknown until set. */
    public static Builder builder(Mode mode) {
        return new Builder(mode);
    }

    /** Shared or exclusive. */
    public Mode mode() {
        return mode;
    }

    /** The {@link Owner#id()}, if the holder recorded one. */
    public Optional<String> ownerId() {
        return ownerId;
    }

    /** Host name of the holder, if known. */
    public Optional<String> host() {
        return host;
    }

    /** Process id of the holder, or -1 if unknown. */
    public long pid() {
        return pid;
    }

    /** When the lock was acquired (holder's wall clock), or when a waiter queued, if known. */
    public Optional<Instant> since() {
        return since;
    }

    /** When the lease runs out, if the backend knows (from its own clock). */
    public Optional<Instant> validUntil() {
        return validUntil;
    }

    /** The fencing token, if known. */
    public OptionalLong token() {
        return token;
    }

    /** The lease duration the holder asked for (for a waiter: how long its place lasts unrenewed), if any. */
    public Optional<Duration> lease() {
        return lease;
    }

    /** The boot id of the holder's host ({@code /proc/sys/kernel/random/boot_id}), if recorded. */
    public Optional<String> bootId() {
        return bootId;
    }

    /** True for a waiter queued for the lock, not holding it: it has no token. */
    public boolean waiting() {
        return waiting;
    }

    /**
     * One line for humans: {@code EX by host:pid:start:nonce (pid 123) since 2026-...Z, token 42}, or
     * for a waiter {@code EX by host:pid:start:nonce (pid 123) waiting since 2026-...Z}.
     */
    public String describe() {
        StringBuilder sb = new StringBuilder(mode.shortName());
        sb.append(" by ")
                .append(ownerId.orElseGet(
                        () -> pid > 0 ? "pid " + pid + " (not an Interlock holder)" : "an unknown holder"));
        if (ownerId.isPresent() && pid > 0) {
            sb.append(" (pid ").append(pid).append(')');
        }
        if (waiting) {
            since.ifPresent(s -> sb.append(" waiting since ").append(s));
            return sb.toString();
        }
        since.ifPresent(s -> sb.append(" since ").append(s));
        // Instant.MAX: a lock that does not expire (a kernel lock of flock:), as Lease.validUntil() says.
        validUntil
                .filter(v -> !v.equals(Instant.MAX))
                .ifPresent(v -> sb.append(", lease until ").append(v));
        if (validUntil.isEmpty()) {
            lease.ifPresent(l -> sb.append(", lease ").append(l.toMillis()).append("ms"));
        }
        if (token.isPresent()) {
            sb.append(", token ").append(token.getAsLong());
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof HolderInfo)) {
            return false;
        }
        HolderInfo h = (HolderInfo) o;
        return mode == h.mode
                && pid == h.pid
                && waiting == h.waiting
                && ownerId.equals(h.ownerId)
                && host.equals(h.host)
                && since.equals(h.since)
                && validUntil.equals(h.validUntil)
                && token.equals(h.token)
                && lease.equals(h.lease)
                && bootId.equals(h.bootId);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, ownerId, host, pid, since, validUntil, token, lease, bootId, waiting);
    }

    @Override
    public String toString() {
        return "HolderInfo[" + describe() + "]";
    }

    /** Builds a {@link HolderInfo}; unset fields are unknown (empty, pid -1). */
    public static final class Builder {
        private final Mode mode;
        private String ownerId;
        private String host;
        private long pid = -1;
        private Instant since;
        private Instant validUntil;
        private OptionalLong token = OptionalLong.empty();
        private Duration lease;
        private String bootId;
        private boolean waiting;

        private Builder(Mode mode) {
            this.mode = Objects.requireNonNull(mode, "mode");
        }

        public Builder ownerId(String ownerId) {
            this.ownerId = ownerId;
            return this;
        }

        public Builder host(String host) {
            this.host = host;
            return this;
        }

        public Builder pid(long pid) {
            this.pid = pid;
            return this;
        }

        public Builder since(Instant since) {
            this.since = since;
            return this;
        }

        public Builder validUntil(Instant validUntil) {
            this.validUntil = validUntil;
            return this;
        }

        public Builder token(long token) {
            this.token = OptionalLong.of(token);
            return this;
        }

        public Builder token(OptionalLong token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        public Builder bootId(String bootId) {
            this.bootId = bootId;
            return this;
        }

        /** Describes a queued waiter, not a holder. */
        public Builder waiting(boolean waiting) {
            this.waiting = waiting;
            return this;
        }

        public HolderInfo build() {
            return new HolderInfo(this);
        }
    }
}
