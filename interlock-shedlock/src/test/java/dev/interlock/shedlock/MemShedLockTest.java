package dev.interlock.shedlock;

import java.util.UUID;

/** ShedLock's provider contract on {@code mem:}. */
class MemShedLockTest extends ShedLockProviderContract {
    private final String uri = "mem:shedlock-" + UUID.randomUUID();

    @Override
    protected String uri() {
        return uri;
    }
}
