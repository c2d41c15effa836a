package dev.interlock.spi.support;

import dev.interlock.LimitMismatchException;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;

/**
 * The exceptions a backend throws, each message in the one form users read everywhere:
 * {@code description - 'name': what happened} (or {@code description - what happened} for the
 * whole space, and {@code description - lost 'name' (token 7): why} for a loss), the name quoted by {@link LockNames#quote} with control characters escaped. Make
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

    /**
     * The grant with fencing token {@code token} no longer holds its lock, in the form the core
     * words its own losses: {@code "description - lost 'name' (token 7): why"}.
     */
    public LockLostException lost(String name, long token, String why, Throwable cause) {
        return new LockLostException(
                description,
                name,
                description + " - lost " + LockNames.quote(name) + " (token " + token + "): " + why,
                cause);
    }

    /**
     * A request whose limit disagrees with the name's current holders (see
     * {@link dev.interlock.spi.AcquireSpec#limit()}); 0 stands for a plain lock on either side.
     * Throw it from the try that found the disagreement, having granted nothing.
     */
    public LimitMismatchException limitMismatch(String name, int limitInForce, int limitAsked) {
        String held = limitInForce == 0 ? "is held as a plain lock" : "is held as a semaphore of " + limitInForce;
        String asked = limitAsked == 0 ? "a plain lock was asked" : "a semaphore of " + limitAsked + " was asked";
        String fix = limitInForce == 0 || limitAsked == 0
                ? "use the name either as a lock or as a semaphore, never both"
                : "state the same limit everywhere; a new limit takes effect once no holder remains";
        return new LimitMismatchException(
                description, name, where(name) + held + " but " + asked + ": " + fix, limitInForce, limitAsked);
    }

    /** An {@code Attempt.await} was interrupted: {@code "description - interrupted while waiting for 'name'"}. */
    public InterruptedException interruptedWaiting(String name) {
        return new InterruptedException(description + " - interrupted while waiting for " + LockNames.quote(name));
    }
}
