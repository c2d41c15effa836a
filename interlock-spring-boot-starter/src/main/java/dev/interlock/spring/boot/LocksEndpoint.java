package dev.interlock.spring.boot;

import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/locks}: the locks this application's lock space can see and who holds them,
 * read-only ({@link LockSpace#list()} and {@link LockSpace#status(String)}; nothing is taken or
 * broken). Owners are shown (host, pid, owner id, since, lease end, token), as
 * {@code interlock status} shows them; the space's URI is shown with any password masked.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {
    private final LockSpace space;

    public LocksEndpoint(LockSpace space) {
        this.space = space;
    }

    /** Every lock the space lists. */
    @ReadOperation
    public Map<String, Object> locks() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("uri", space.uri());
        out.put("locks", space.list().stream().map(LocksEndpoint::describe).toList());
        return out;
    }

    /** One lock, by name: {@code /actuator/locks/{name}}. */
    @ReadOperation
    public Map<String, Object> lock(@Selector String name) {
        return describe(space.status(name));
    }

    private static Map<String, Object> describe(LockInfo info) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", info.name());
        out.put("holders", holders(info.holders()));
        if (info.waiters() >= 0) {
            out.put("waiters", info.waiters());
        }
        if (!info.queued().isEmpty()) {
            out.put("queued", holders(info.queued()));
        }
        return out;
    }

    private static List<Map<String, Object>> holders(List<HolderInfo> holders) {
        return holders.stream().map(LocksEndpoint::holder).toList();
    }

    private static Map<String, Object> holder(HolderInfo h) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("mode", h.mode().name().toLowerCase(Locale.ROOT));
        h.ownerId().ifPresent(v -> out.put("owner", v));
        h.host().ifPresent(v -> out.put("host", v));
        if (h.pid() >= 0) {
            out.put("pid", h.pid());
        }
        h.since().ifPresent(v -> out.put("since", v.toString()));
        h.validUntil().ifPresent(v -> out.put("validUntil", v.toString()));
        h.lease().ifPresent(v -> out.put("lease", v.toString()));
        h.token().ifPresent(v -> out.put("token", v));
        return out;
    }
}
