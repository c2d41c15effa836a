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
    /** The digest user the session authenticates as, or null; named when ZooKeeper refuses access. */
    private final String user;

    ZkFailures(BackendFailures failures, String description, String user) {
        this.failures = failures;
        this.description = description;
        this.user = user;
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
                return failures.refused(name, doing + ": " + refusedAccess(path), e);
            case INVALIDACL:
                // Only a creator-only ACL is ever asked for, and ZooKeeper refuses it from a client
                // with no authenticated identity: a given client that was not authenticated.
                return failures.refused(
                        name,
                        doing + ": ZooKeeper refused to make a node" + path + " its creator's alone, because the"
                                + " client has no authenticated identity: authenticate the client (addAuthInfo)"
                                + " before giving it, or leave ZkOptions.CREATOR_ONLY off",
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

    /**
     * Why ZooKeeper says NoAuth, in the user's terms. Digest authentication itself never fails (the
     * servers keep no list of users: a wrong password is a different identity), so a wrong password
     * shows up here, as nodes its identity may not use.
     */
    String refusedAccess(String path) {
        if (user == null) {
            return "ZooKeeper refused access" + path + ": its ACL does not let an unauthenticated client in; give"
                    + " the user and password of the space's ZooKeeper user in the URI (zk://USER:PASSWORD@HOST),"
                    + " or choose another path";
        }
        return "ZooKeeper refused access" + path + " to the user " + user + " with the password given: the password"
                + " is wrong, or the node belongs to another ZooKeeper user (nodes made by an authenticated"
                + " Interlock space are its user's alone); check the user name and password, or choose another path";
    }

    /** A blocking ZooKeeper call was interrupted: the thread's interrupt flag is set again. */
    LockBackendException interrupted(String name, String doing, InterruptedException e) {
        Thread.currentThread().interrupt();
        return failures.unreachable(name, doing + " was interrupted", e);
    }
}
