package dev.interlock.file.dir;

import dev.interlock.file.internal.FileSpaceUri;
import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import dev.interlock.spi.support.Barging;
import dev.interlock.spi.support.UriOptions;
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
    static final Duration MAX_POLL = Duration.ofHours(24);

    @Override
    public Set<String> schemes() {
        return Set.of("dir");
    }

    @Override
    public String description() {
        return "NFS-safe lock files shared by many hosts, no daemon: dir:/shared/path[?poll=100ms][&barge="
                + Barging.DEFAULT + "]";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        FileSpaceUri uri = FileSpaceUri.parse(config, "dir:/mnt/shared/locks", Set.of("poll", "barge"));
        String value = uri.options().get("poll");
        // The grammar of every scheme and of the command line (1h, 1m30s, 2.5...). A long poll only
        // delays seeing another host's release, never safety: up to a day is taken.
        Duration poll = value == null
                ? DEFAULT_POLL
                : UriOptions.duration("'" + config.maskedUri() + "': ", "poll", value, Duration.ofMillis(1), MAX_POLL);
        int barge = Barging.parse(uri.options().get("barge"), "'" + config.maskedUri() + "': ");
        return new DirLockBackend(config, uri.directory(), poll.toNanos(), barge);
    }
}
