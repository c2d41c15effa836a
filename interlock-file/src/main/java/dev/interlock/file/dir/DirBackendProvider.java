package dev.interlock.file.dir;

import dev.interlock.file.internal.FileSpaceUri;
import dev.interlock.spi.support.Barging;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.time.Duration;
import java.util.Set;

/**
 * Provides {@code dir:/path[?poll=DURATION][&barge=N]} (the forms of {@link FileSpaceUri}): NFS-safe
 * lock files shared by many hosts.
 * {@code poll} (default 100ms, jittered by ±50%) bounds how long a waiter may miss a release made
 * on another host; releases on this host wake waiters at once (inotify). {@code barge} (default
 * {@value Barging#DEFAULT}, 0 = strictly in turn) is how many times in a row a
 * process may take back the lock it has just released, while nobody else has had it since,
 * ahead of queued waiters (docs/dir-protocol.md, 4.6).
 */
public final class DirBackendProvider implements LockBackendProvider {
    static final Duration DEFAULT_POLL = Duration.ofMillis(100);

    @Override
    public Set<String> schemes() {
        return Set.of("dir");
    }

    @Override
    public String description() {
        return "NFS-safe lock files shared by many hosts, no daemon: dir:/shared/path[?poll=100ms][&barge=" + Barging.DEFAULT + "]";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        FileSpaceUri uri = FileSpaceUri.parse(config, "dir:/mnt/shared/locks", Set.of("poll", "barge"));
        Duration poll = DEFAULT_POLL;
        String value = uri.options().get("poll");
        if (value != null) {
            poll = DirLockBackend.parseDuration(value);
            if (poll.toMillis() < 1 || poll.toMinutes() > 10) {
                throw new IllegalArgumentException("'" + config.maskedUri() + "': poll must be between 1ms and 10m, was " + value);
            }
        }
        int barge = Barging.parse(uri.options().get("barge"), "'" + config.maskedUri() + "': ");
        return new DirLockBackend(config, uri.directory(), poll.toNanos(), barge);
    }
}
