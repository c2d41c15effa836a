package dev.interlock.file.flock;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Set;

/** Registers the {@code flock:} scheme. Public only for {@link java.util.ServiceLoader}. */
public final class FlockBackendProvider implements LockBackendProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("flock");
    }

    @Override
    public String description() {
        return "kernel flock(2) locks on files in a directory (one host; interoperates with util-linux flock(1))";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return FlockBackend.open(config);
    }
}
