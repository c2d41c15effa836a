package dev.interlock.example;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.LockBackend;
import dev.interlock.spi.LockBackendProvider;
import java.util.Set;

/** Opens {@code example:NAMESPACE[?poll=1s]} (found by ServiceLoader, declared in module-info). */
public final class ExampleBackendProvider implements LockBackendProvider {
    @Override
    public Set<String> schemes() {
        return Set.of("example");
    }

    @Override
    public String description() {
        return "example:NAMESPACE[?poll=1s] - the SPI example: a lock table in this JVM's memory";
    }

    @Override
    public LockBackend open(BackendConfig config) {
        return ExampleBackend.open(config);
    }
}
