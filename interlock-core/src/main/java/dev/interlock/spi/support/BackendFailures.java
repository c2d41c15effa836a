package dev.interlock.spi.support;

import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;

/**
 * The exceptions a backend throws, each message in the one form users read everywhere:
 * {@code description - 'name': what happened} (or {@code description - what happened} for the
 * whole space), the name quoted by {@link LockNames#quote} with control characters escaped. Make
 * one per backend from its {@code description()} (passwords masked, see {@link Secrets}); say in
 * {@code what} what went wrong and what to fix, never a Java class name.
 */
public final class BackendFailures {
    private final String description;

    /** @param description the backend's {@code description()}: no password in it */
    public BackendFailures(String description) {
        this.description = description;
    }

    /** The start of a message: {@code "description - 'name': "}, or {@code "description - "} if {@code name} is null. */
    public String where(String name) {
        return name == null ? description + " - " : description + " - " + LockNames.quote(name) + ": ";
    }

    /**
     * The storage could not be reached or did not answer; the same call may succeed later
     * ({@link LockBackendException#isTransient()}).
     */
    public LockBackendException unreachable(String name, String what, Throwable cause) {
        return new LockBackendException(description, name, where(name) + what, cause, true);
    }

    /** The storage refused, or is set up wrong: retrying will not help until someone fixes what {@code what} says. */
    public LockBackendException refused(String name, String what, Throwable cause) {
        return new LockBackendException(description, name, where(name) + what, cause, false);
    }

    /** A lock is no longer held by this grant ({@code what}: why, e.g. "its lease ran out, or it was broken"). */
    public LockLostException lost(String name, String what, Throwable cause) {
        return new LockLostException(description, name, where(name) + what, cause);
    }

    /** An {@code Attempt.await} was interrupted: {@code "description - interrupted while waiting for 'name'"}. */
    public InterruptedException interruptedWaiting(String name) {
        return new InterruptedException(description + " - interrupted while waiting for " + LockNames.quote(name));
    }
}
