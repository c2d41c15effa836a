package dev.interlock.spring;

import dev.interlock.mem.MemoryBackend;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** The registry's lease contract on the in-memory reference backend. */
class MemRegistryLeaseTest extends RegistryLeaseContract {
    private final String ns = UUID.randomUUID().toString();

    @Override
    protected String newUri() {
        return "mem:" + ns;
    }

    @AfterEach
    void forget() {
        MemoryBackend.forget(ns);
    }
}
