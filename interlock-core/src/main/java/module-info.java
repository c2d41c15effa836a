/**
 * Interlock: named locks across threads, processes, hosts and clusters. The API
 * ({@code dev.interlock}), the SPI for backends ({@code dev.interlock.spi}), the in-memory
 * backend ({@code mem:}) and the exclusion check behind {@code interlock verify}. Backends are
 * found with {@link java.util.ServiceLoader}.
 */
@SuppressWarnings("module") // the qualified export names modules that may not be on the module path
module dev.interlock {
    requires org.slf4j;

    exports dev.interlock;
    exports dev.interlock.spi;
    exports dev.interlock.mem;
    exports dev.interlock.check;
    // Shared by Interlock's own modules only; not an API.
    exports dev.interlock.internal to dev.interlock.file, dev.interlock.cli, dev.interlock.jdbc, dev.interlock.redis,
            dev.interlock.shedlock, dev.interlock.spring;

    uses dev.interlock.spi.LockBackendProvider;

    provides dev.interlock.spi.LockBackendProvider with dev.interlock.mem.MemoryBackendProvider;
}
