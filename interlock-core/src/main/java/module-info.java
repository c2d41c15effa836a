/**
 * Interlock: named locks across threads, processes, hosts and clusters. The API
 * ({@code dev.interlock}), the SPI for backends ({@code dev.interlock.spi}), the in-memory
 * backend ({@code mem:}) and the exclusion check behind {@code interlock verify}. Backends are
 * found with {@link java.util.ServiceLoader}.
 */
@SuppressWarnings("module") // the qualified export names a module that may not be on the module path
module dev.interlock {
    requires org.slf4j;

    exports dev.interlock;
    exports dev.interlock.spi;
    exports dev.interlock.mem;
    exports dev.interlock.check;
    // What every backend builds on: first-party and third-party backends alike (docs/spi.md, "Usage").
    exports dev.interlock.spi.support;
    // The command-line tool's hooks into the core (supervision of `interlock run`); not an API.
    exports dev.interlock.internal to
            dev.interlock.cli;

    uses dev.interlock.spi.LockBackendProvider;

    provides dev.interlock.spi.LockBackendProvider with
            dev.interlock.mem.MemoryBackendProvider;
}
