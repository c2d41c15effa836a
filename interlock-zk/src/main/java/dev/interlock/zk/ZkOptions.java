package dev.interlock.zk;

import dev.interlock.Option;
import org.apache.zookeeper.ZooKeeper;

/**
 * Options of {@code zk:} spaces, given with {@code Interlock.builder(uri).option(...)}.
 *
 * <pre>{@code
 * ZooKeeper zk = curator.getZookeeperClient().getZooKeeper(); // or a client of your own
 * LockSpace locks = Interlock.builder("zk://ignored/app/locks").option(ZkOptions.CLIENT, zk).open();
 * }</pre>
 */
public final class ZkOptions {
    private ZkOptions() {}

    /**
     * The application's own ZooKeeper client: the space locks in its session instead of opening one
     * (the URI's servers and {@code session=} are then not used; its path and other options are).
     * The space never closes it; once its session has expired the space can take no more locks,
     * and must be opened again on a new client.
     */
    public static final Option<ZooKeeper> CLIENT = Option.of("zk.client", ZooKeeper.class);

    /**
     * With {@link #CLIENT}: the application has authenticated its client ({@code addAuthInfo}), and
     * every node the space makes is to get ZooKeeper's {@code CREATOR_ALL_ACL}, so that no other
     * client can delete a holder's place, as with a user in the URI (docs/zookeeper.md). The space
     * cannot see a given client's credentials, so without this its nodes are open to every client.
     * A client with no authenticated identity is refused at its first acquisition (ZooKeeper takes
     * no creator-only ACL from it). Without {@link #CLIENT} it is refused: a user in the URI does this.
     */
    public static final Option<Boolean> CREATOR_ONLY = Option.of("zk.creatorOnly", Boolean.class);
}
