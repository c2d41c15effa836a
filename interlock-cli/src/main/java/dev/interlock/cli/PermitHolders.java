package dev.interlock.cli;

import dev.interlock.HolderInfo;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Who stands in the way of a permit of a semaphore, for the messages of {@code run --limit N}
 * when it is busy or waits: {@code all 3 permits taken: held by A (pid 1, since T, token 5), B
 * (...), C (...); 2 waiting}. A lock's blockers read {@code held EX by A ...}
 * ({@code DefaultLockSpace.describe}), which for a semaphore said every permit holder was an
 * exclusive holder and never said how many permits there are.
 */
final class PermitHolders {
    private PermitHolders() {}

    /**
     * The permit holders and the waiters among {@code blockers} (holders and waiters queued
     * before this one), for a semaphore of {@code limit}.
     */
    static String describe(int limit, List<HolderInfo> blockers) {
        List<String> held = new ArrayList<>();
        int waiting = 0;
        for (HolderInfo h : blockers) {
            if (h.waiting()) {
                waiting++;
            } else {
                held.add(holder(h));
            }
        }
        StringBuilder sb = new StringBuilder();
        if (held.isEmpty()) {
            sb.append("no permit taken");
        } else {
            sb.append(held.size() >= limit ? "all " + limit : held.size() + " of " + limit)
                    .append(limit == 1 ? " permit" : " permits")
                    .append(" taken: held by ")
                    .append(String.join(", ", held));
        }
        if (waiting > 0) {
            sb.append("; ").append(waiting).append(" waiting");
            if (held.size() < limit) {
                sb.append(waiting == 1 ? ", who goes first" : ", who go first");
            }
        }
        return sb.toString();
    }

    /** {@code OWNER (pid 123, since T, lease until U, token 5)}: what is known of one permit holder. */
    private static String holder(HolderInfo h) {
        List<String> facts = new ArrayList<>();
        if (h.ownerId().isPresent() && h.pid() > 0) {
            facts.add("pid " + h.pid());
        }
        // Milliseconds: the nanoseconds a backend may give say nothing to a person reading who holds it.
        h.since().ifPresent(s -> facts.add("since " + s.truncatedTo(ChronoUnit.MILLIS)));
        h.validUntil()
                .filter(v -> !v.equals(Instant.MAX))
                .ifPresent(v -> facts.add("lease until " + v.truncatedTo(ChronoUnit.MILLIS)));
        h.token().ifPresent(t -> facts.add("token " + t));
        String who = h.ownerId().orElseGet(() -> h.pid() > 0 ? "pid " + h.pid() : "an unknown holder");
        return facts.isEmpty() ? who : who + " (" + String.join(", ", facts) + ")";
    }
}
