package dev.interlock.file.dir;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * Provides {@code dir:/absolute/path[?poll=DURATION]}: NFS-safe lock files shared by many hosts.
 * {@code poll} (default 100ms, jittered by ±50%) bounds how long a waiter may miss a release made
 * on another host; releases on this host wake waiters at once (inotify).
 */
public final class DirBackendProvider implements LockBackendProvider {
    static final Duration DEFAULT_POLL = Duration.ofMillis(100);

    @Override
    public Set<String> schemes() {
        return Set.of("dir");
    }

    @Override
    public String description() {
        return "NFS-safe lock files shared by many hosts, no daemon: dir:/shared/path[?poll=100ms]";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        String loc = config.location();
        String query = "";
        int q = loc.indexOf('?');
        if (q >= 0) {
            query = loc.substring(q + 1);
            loc = loc.substring(0, q);
        }
        if (loc.startsWith("//")) {
            loc = loc.substring(2); // dir:///path
        }
        if (!loc.startsWith("/")) {
            throw new IllegalArgumentException("'" + config.uri() + "': the dir: backend needs an absolute path, e.g. dir:/mnt/shared/locks");
        }
        Duration poll = DEFAULT_POLL;
        for (String kv : query.split("&")) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            String key = eq < 0 ? kv : kv.substring(0, eq);
            String value = eq < 0 ? "" : URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            if (key.equals("poll")) {
                poll = DirLockBackend.parseDuration(value);
                if (poll.toMillis() < 1 || poll.toMinutes() > 10) {
                    throw new IllegalArgumentException("'" + config.uri() + "': poll must be between 1ms and 10m, was " + value);
                }
            } else {
                throw new IllegalArgumentException("'" + config.uri() + "': unknown option '" + key + "'; the dir: backend takes poll=DURATION");
            }
        }
        Path root = Path.of(URLDecoder.decode(loc.replace("+", "%2B"), StandardCharsets.UTF_8)).normalize();
        return new DirLockBackend(config, root, poll.toNanos());
    }
}
