package dev.interlock.example;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** The contract every backend passes, on the example backend (break by owner takes a lock away). */
class ExampleContractTest extends LockSpaceContract {
    private final String ns = UUID.randomUUID().toString();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open(uri());
    }

    @Override
    protected String uri() {
        return "example:" + ns;
    }

    @AfterEach
    void forget() {
        ExampleBackend.forget(ns);
    }
}
