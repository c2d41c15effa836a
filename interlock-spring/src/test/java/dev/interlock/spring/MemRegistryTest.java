package dev.interlock.spring;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** The registry on the in-memory reference backend. */
class MemRegistryTest extends RegistryContract {
    final String ns = UUID.randomUUID().toString();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("mem:" + ns);
    }

    @AfterEach
    void forget() {
        MemoryBackend.forget(ns);
    }
}
