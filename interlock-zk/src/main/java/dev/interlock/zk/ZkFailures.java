package dev.interlock.zk;

import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.spi.support.BackendFailures;
import dev.interlock.spi.support.LockNames;
import java.util.Locale;
import org.apache.zookeeper.KeeperException;

/**
 * What ZooKeeper's errors mean to a user, in {@link BackendFailures}' form: never an exception
 * class name, always what to check or fix.
 */
final class ZkFailures {
    final BackendFailures failures;
    private final String description;

    ZkFailures(BackendFailures failures, String description) {
        this.failures = failures;
        this.description = description;
    }

    /**
     * The grant with token {@code token} no longer holds {@code name}: {@code "description - lost
     * 'name' (token 7): why"}, the form in which the core words its own losses.
     */
    LockLostException lost(String name, long token, String why, Throwable cause) {
        return new LockLostException(
                description,
                name,
                description + " - lost " + LockNames.quote(name) + " (token " + token + "): " + why,
                cause);
    }

    /** {@code e} from an operation on {@code path} about lock {@code name} (null: the whole space). */
    LockBackendException translate(String name, String doing, KeeperException e) {
        String path = e.getPath() == null ? "" : " at " + e.getPath();
        switch (e.code()) {
            case CONNECTIONLOSS:
            case OPERATIONTIMEOUT:
            case SESSIONMOVED:
            case NOTREADONLY:
            case RECONFIGINPROGRESS:
                return failures.unreachable(
                        name,
                        doing + ": the ZooKeeper ensemble did not answer (connection lost); check that a majority of"
                                + " its servers runs and is reachable",
                        e);
            case SESSIONEXPIRED:
                return failures.unreachable(
                        name, doing + ": the ZooKeeper session expired; a new one is made at the next try", e);
            case NOAUTH:
            case AUTHFAILED:
                return failures.refused(
                        name,
                        doing + ": ZooKeeper refused access" + path + " (its ACL does not allow this client); grant"
                                + " create, read and delete there, or choose another path",
                        e);
            case NOCHILDRENFOREPHEMERALS:
                return failures.refused(
                        name,
                        doing + ": the node" + path + " is ephemeral, so no lock can live under it: it was not made"
                                + " by Interlock; remove it or choose another path",
                        e);
            default:
                return failures.refused(
                        name,
                        doing + ": ZooKeeper answered '" + e.code().name().toLowerCase(Locale.ROOT) + "'" + path,
                        e);
        }
    }

    /** A blocking ZooKeeper call was interrupted: the thread's interrupt flag is set again. */
    LockBackendException interrupted(String name, String doing, InterruptedException e) {
        Thread.currentThread().interrupt();
        return failures.unreachable(name, doing + " was interrupted", e);
    }
}
