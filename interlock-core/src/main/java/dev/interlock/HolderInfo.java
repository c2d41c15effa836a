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
 * @param mode shared or exclusive
 * @param ownerId the {@link Owner#id()}, if the holder recorded one
 * @param host host name of the holder, if known
 * @param pid process id of the holder, or -1 if unknown
 * @param since when the lock was acquired (holder's wall clock), if known
 * @param validUntil when the lease runs out, if it has a lease
 * @param token the fencing token, if known
 * @param lease the lease duration the holder asked for, if it has a lease
 * @param bootId the boot id of the holder's host ({@code /proc/sys/kernel/random/boot_id}), if recorded
 * @param waiting true for a waiter queued for the lock, not holding it: then {@code since} is when it
 *     queued, {@code lease} how long its place lasts unrenewed, and it has no token
 */
public record HolderInfo(
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

    /** A holder (not a waiter). */
    public HolderInfo(Mode mode, Optional<String> ownerId, Optional<String> host, long pid, Optional<Instant> since,
            Optional<Instant> validUntil, OptionalLong token, Optional<Duration> lease, Optional<String> bootId) {
        this(mode, ownerId, host, pid, since, validUntil, token, lease, bootId, false);
    }

    /** A holder with no lease and no recorded boot id (kernel locks). */
    public HolderInfo(Mode mode, Optional<String> ownerId, Optional<String> host, long pid, Optional<Instant> since,
            Optional<Instant> validUntil, OptionalLong token) {
        this(mode, ownerId, host, pid, since, validUntil, token, Optional.empty(), Optional.empty(), false);
    }

    public HolderInfo {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(since, "since");
        Objects.requireNonNull(validUntil, "validUntil");
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(bootId, "bootId");
    }

    /**
     * One line for humans: {@code EX by host:pid:start:nonce (pid 123) since 2026-...Z, token 42}, or
     * for a waiter {@code EX by host:pid:start:nonce (pid 123) waiting since 2026-...Z}.
     */
    public String describe() {
        StringBuilder sb = new StringBuilder(mode.shortName());
        sb.append(" by ").append(ownerId.orElseGet(() -> pid > 0 ? "pid " + pid + " (not an Interlock holder)" : "an unknown holder"));
        if (ownerId.isPresent() && pid > 0) {
            sb.append(" (pid ").append(pid).append(')');
        }
        if (waiting) {
            since.ifPresent(s -> sb.append(" waiting since ").append(s));
            return sb.toString();
        }
        since.ifPresent(s -> sb.append(" since ").append(s));
        validUntil.ifPresent(v -> sb.append(", lease until ").append(v));
        if (validUntil.isEmpty()) {
            lease.ifPresent(l -> sb.append(", lease ").append(l.toMillis()).append("ms"));
        }
        if (token.isPresent()) {
            sb.append(", token ").append(token.getAsLong());
        }
        return sb.toString();
    }
}
