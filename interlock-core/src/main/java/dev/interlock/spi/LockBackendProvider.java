package dev.interlock.spi;

import java.util.Set;

/**
 * Creates backends for one or more URI schemes. Registered in
 * {@code META-INF/services/dev.interlock.spi.LockBackendProvider}.
 */
public interface LockBackendProvider {
    /** Lower-case schemes without the colon, e.g. {@code flock}. */
    Set<String> schemes();

    /** One line for {@code interlock --help}. */
    String description();

    /**
     * Opens a backend.
     *
     * @throws IllegalArgumentException if the location is malformed (the message says the expected form)
     * @throws dev.interlock.LockBackendException if the backend is unusable
     */
    LockBackend open(BackendConfig config);
}
