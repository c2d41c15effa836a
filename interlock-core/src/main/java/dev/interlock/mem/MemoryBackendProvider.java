package dev.interlock.mem;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Set;

/** Registers the {@code mem:} scheme. Public only for {@link java.util.ServiceLoader}. */
public final class MemoryBackendProvider implements LockBackendProvider {
    /** For {@link java.util.ServiceLoader}. */
    public MemoryBackendProvider() {}

    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public String description() {
        return "locks in this JVM's memory, shared by the spaces of one namespace (tests, one process): mem:NAMESPACE";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return MemoryBackend.open(config);
    }
}
