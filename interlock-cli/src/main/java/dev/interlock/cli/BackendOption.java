package dev.interlock.cli;

import dev.interlock.Capability;
import dev.interlock.Interlock;
import dev.interlock.InvalidLockNameException;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import dev.interlock.spi.support.LockNames;
import picocli.CommandLine.Option;

/** The {@code --backend URI} option shared by every command, and opening the lock space it names. */
final class BackendOption {
    @Option(
            names = "--backend",
            paramLabel = "URI",
            description = "Lock space, e.g. flock:/var/lock/myapp. Default: $INTERLOCK_BACKEND, else"
                    + " flock: on a private per-user directory (~/.local/state/interlock/locks, or"
                    + " /tmp/interlock-UID if the home is not writable).")
    String uri;

    /** Opens the lock space, turning failures into messages with exit codes 64 (bad URI) or 69 (unusable backend). */
    LockSpace open(Env env) {
        return open(env, true);
    }

    /**
     * Opens the lock space; the default per-user directory is created only if {@code createDefault}
     * (commands that lock), so commands that only read leave no trace.
     */
    LockSpace open(Env env, boolean createDefault) {
        String resolved = DefaultBackend.resolve(uri, env, createDefault);
        try {
            // Commands that only read open the space so that it creates nothing (jdbc:'s create=true
            // made tables for 'status'); the file backends create nothing before the first lock anyway.
            return createDefault
                    ? Interlock.open(resolved)
                    : Interlock.builder(resolved)
                            .option(Interlock.CREATE_NOTHING, true)
                            .open();
        } catch (LockBackendException e) {
            throw new CliException(ExitCodes.UNAVAILABLE, e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            String source = uri != null ? "--backend" : "$" + DefaultBackend.ENV;
            throw new CliException(ExitCodes.USAGE, "bad " + source + ": " + e.getMessage(), e);
        }
    }

    /** Refuses (69) a --limit on a space whose backend has no semaphores, before anything is asked of it. */
    static void requireSemaphores(LockSpace space) {
        if (!space.capabilities().contains(Capability.SEMAPHORE)) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    space.uri() + " - semaphores (--limit) are not supported by " + space.uri()
                            + " yet; docs/semaphores.md lists the backends that have them");
        }
    }

    /** Checks a lock name before anything is opened, so a bad name is a usage error (64). */
    static String checkName(String name) {
        try {
            return LockNames.validate(name);
        } catch (InvalidLockNameException e) {
            throw new CliException(
                    ExitCodes.USAGE, "bad lock name " + LockNames.quote(name) + ": " + e.getMessage(), e);
        }
    }
}
