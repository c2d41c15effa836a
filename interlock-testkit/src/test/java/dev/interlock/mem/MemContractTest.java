package dev.interlock.mem;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.testkit.BackendHooks;
import dev.interlock.testkit.LockSpaceContract;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** The shared contract on {@code mem:}, the reference backend, with every fault hook. */
class MemContractTest extends LockSpaceContract {
    final String ns = UUID.randomUUID().toString();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return "mem:" + ns;
    }

    MemoryBackend backend() {
        return MemoryBackend.of(ns).orElseThrow();
    }

    @Override
    protected BackendHooks hooks() {
        return new BackendHooks() {
            @Override
            public boolean cut() {
                backend().cut();
                return true;
            }

            @Override
            public void restore() {
                backend().restore();
            }

            @Override
            public boolean takeAway(Lease lease) {
                return backend().takeAway(lease.name(), lease.owner().id());
            }

            @Override
            public boolean pushLoss(Lease lease) {
                return backend().reportLoss(lease.name(), lease.owner().id(), "the test said so");
            }
        };
    }

    @AfterEach
    void forget() {
        MemoryBackend.forget(ns);
    }
}
