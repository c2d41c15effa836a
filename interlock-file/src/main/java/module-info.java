/**
 * Interlock's file backends: {@code flock:} (kernel locks on one host) and {@code dir:} (NFS-safe
 * lock files shared by many hosts). Both register themselves with the core's
 * {@link java.util.ServiceLoader}; nothing here is an API to call directly.
 */
@SuppressWarnings("module") // the qualified export names a module that may not be on the module path
module dev.interlock.file {
    requires dev.interlock;
    requires com.sun.jna;
    requires org.slf4j;

    // The native layer, shared with the command-line tool; not an API.
    exports dev.interlock.file.internal to dev.interlock.cli;

    provides dev.interlock.spi.LockBackendProvider with dev.interlock.file.flock.FlockBackendProvider,
            dev.interlock.file.dir.DirBackendProvider;
}
