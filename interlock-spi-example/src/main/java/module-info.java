/**
 * The smallest complete Interlock backend, {@code example:NAMESPACE}, written as a third party
 * would: it requires {@code dev.interlock} and uses only its exported packages
 * ({@code dev.interlock}, {@code dev.interlock.spi}, {@code dev.interlock.spi.support}).
 * See docs/spi.md, "Usage".
 */
module dev.interlock.example {
    requires dev.interlock;

    exports dev.interlock.example;

    provides dev.interlock.spi.LockBackendProvider with
            dev.interlock.example.ExampleBackendProvider;
}
