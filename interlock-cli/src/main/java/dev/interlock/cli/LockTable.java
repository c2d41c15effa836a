package dev.interlock.cli;

import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.spi.support.Durations;
import dev.interlock.spi.support.LockNames;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Renders lock states for {@code status} and {@code list}: a table for people, JSON for machines. */
final class LockTable {
    private static final String[] HEADER = {
        "NAME", "MODE", "OWNER", "HOST", "BOOT", "PID", "SINCE", "LEASE", "TOKEN", "WAITERS"
    };

    private LockTable() {}

    static String table(List<LockInfo> locks, Instant now) {
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (LockInfo info : locks) {
            String waiters = info.waiters() < 0 ? "-" : String.valueOf(info.waiters());
            if (info.isFree()) {
                rows.add(new String[] {displayName(info.name()), "free", "-", "-", "-", "-", "-", "-", "-", waiters});
            }
            List<HolderInfo> everyone = new ArrayList<>(info.holders());
            everyone.addAll(info.queued());
            for (HolderInfo h : everyone) {
                rows.add(new String[] {
                    displayName(info.name()),
                    (h.waiting() ? "waits " : "") + mode(h, info),
                    h.ownerId().orElse(h.pid() > 0 ? "(not interlock)" : "?"),
                    h.host().orElse("-"),
                    h.bootId().map(b -> b.length() > 8 ? b.substring(0, 8) : b).orElse("-"),
                    h.pid() > 0 ? String.valueOf(h.pid()) : "-",
                    h.since()
                            .map(s -> s.truncatedTo(ChronoUnit.SECONDS).toString())
                            .orElse("-"),
                    lease(h, now),
                    h.token().isPresent() ? String.valueOf(h.token().getAsLong()) : "-",
                    waiters
                });
            }
        }
        int[] width = new int[HEADER.length];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].codePointCount(0, r[i].length()));
            }
        }
        StringBuilder sb = new StringBuilder();
        for (String[] r : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                line.append(r[i]);
                if (i < r.length - 1) {
                    line.append(" ".repeat(width[i] - r[i].codePointCount(0, r[i].length()) + 2));
                }
            }
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        return sb.toString();
    }

    /**
     * {@code EX} or {@code SH}; for a semaphore, {@code permit/N}: each holder has one of N permits
     * (a waiter on a semaphore name waits for one).
     */
    private static String mode(HolderInfo h, LockInfo info) {
        return info.limit() > 0 ? "permit/" + info.limit() : h.mode().shortName();
    }

    /** Time left when the backend knows the deadline, else the lease duration ("30s lease"), else "-". */
    private static String lease(HolderInfo h, Instant now) {
        Optional<Instant> until = h.validUntil().filter(v -> !v.equals(Instant.MAX));
        if (until.isPresent()) {
            return leaseLeft(until.get(), now) + " left";
        }
        return h.lease().map(l -> Durations.format(l) + " lease").orElse("-");
    }

    private static String leaseLeft(Instant validUntil, Instant now) {
        if (validUntil.equals(Instant.MAX)) {
            return "-";
        }
        Duration left = Duration.between(now, validUntil);
        return left.isNegative() ? "expired" : Durations.format(left);
    }

    private static String displayName(String name) {
        for (int i = 0; i < name.length(); i++) {
            if (Character.isWhitespace(name.charAt(i))) {
                return LockNames.quote(name);
            }
        }
        return name;
    }

    static String json(String backend, List<LockInfo> locks, Instant now) {
        Json j = new Json()
                .beginObject()
                .name("backend")
                .value(backend)
                .name("locks")
                .beginArray();
        for (LockInfo info : locks) {
            j.beginObject()
                    .name("name")
                    .value(info.name())
                    .name("free")
                    .value(info.isFree())
                    .name("limit");
            if (info.limit() > 0) {
                j.value(info.limit());
            } else {
                j.nullValue();
            }
            j.name("waiters");
            if (info.waiters() < 0) {
                j.nullValue();
            } else {
                j.value(info.waiters());
            }
            j.name("holders").beginArray();
            for (HolderInfo h : info.holders()) {
                holder(j, h, now);
            }
            j.endArray().name("queued").beginArray();
            for (HolderInfo h : info.queued()) {
                holder(j, h, now);
            }
            j.endArray().endObject();
        }
        return j.endArray().endObject().toString();
    }

    private static void holder(Json j, HolderInfo h, Instant now) {
        j.beginObject()
                .name("mode")
                .value(h.mode().shortName())
                .name("owner")
                .value(h.ownerId().orElse(null))
                .name("host")
                .value(h.host().orElse(null))
                .name("pid");
        if (h.pid() > 0) {
            j.value(h.pid());
        } else {
            j.nullValue();
        }
        j.name("since").value(h.since().map(Instant::toString).orElse(null));
        Instant until = h.validUntil().filter(v -> !v.equals(Instant.MAX)).orElse(null);
        j.name("validUntil").value(until == null ? null : until.toString());
        j.name("leaseLeftMs");
        if (until == null) {
            j.nullValue();
        } else {
            j.value(Math.max(0, Duration.between(now, until).toMillis()));
        }
        j.name("leaseMs");
        if (h.lease().isPresent()) {
            j.value(h.lease().get().toMillis());
        } else {
            j.nullValue();
        }
        j.name("bootId").value(h.bootId().orElse(null));
        j.name("token");
        if (h.token().isPresent()) {
            j.value(h.token().getAsLong());
        } else {
            j.nullValue();
        }
        j.endObject();
    }
}
