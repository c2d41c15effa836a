package dev.interlock.core;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.mem.MemoryBackend;
import dev.interlock.testkit.FakeTicker;
import dev.interlock.testkit.ManualScheduler;
import dev.interlock.testkit.SemaphoreContract;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;

/** The semaphore contract on {@code mem:}, the reference backend, with leases on fake time. */
class MemSemaphoreContractTest extends SemaphoreContract {
    final String ns = UUID.randomUUID().toString();
    final String fakeTimeNs = UUID.randomUUID().toString();

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("mem:" + ns);
    }

    /** A fresh namespace: mem: keeps time on the ticker of the first space opened on it. */
    @Override
    protected Optional<List<LockSpace>> openOnFakeTime(FakeTicker ticker, ManualScheduler timer) {
        LockSpace first = Interlock.builder("mem:" + fakeTimeNs)
                .ticker(ticker)
                .scheduler(timer)
                .executor(timer)
                .open();
        return Optional.of(List.of(
                first, Interlock.builder("mem:" + fakeTimeNs).ticker(ticker).open()));
    }

    @AfterEach
    void forget() {
        MemoryBackend.forget(ns);
        MemoryBackend.forget(fakeTimeNs);
    }
}
