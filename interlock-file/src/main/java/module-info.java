/**
 * Interlock's file backends: {@code flock:} (kernel locks on one host) and {@code dir:} (NFS-safe
 * lock files shared by many hosts), which register themselves with the core's
 * {@link java.util.ServiceLoader}; and the protected data they guard: atomic, lease-checked and
 * fenced replacement of files ({@link dev.interlock.file.AtomicFile}), the one public package.
 */
@SuppressWarnings("module") // the qualified export names a module that may not be on the module path
module dev.interlock.file {
    requires dev.interlock;
    requires com.sun.jna;
    requires org.slf4j;

    exports dev.interlock.file;

    // The native layer, shared with the command-line tool; not an API.
    exports dev.interlock.file.internal to
            dev.interlock.cli;

    provides dev.interlock.spi.LockBackendProvider with
            dev.interlock.file.flock.FlockBackendProvider,
            dev.interlock.file.dir.DirBackendProvider;
}
