/**
 * The {@code zk:} backend: locks as queues of ephemeral sequential nodes in a ZooKeeper ensemble,
 * held by the client's session, with the node's creation zxid as fencing token. Opened from a
 * {@code zk://} URI by {@link dev.interlock.Interlock#open(String)}, or on an application's own
 * client with {@link dev.interlock.zk.ZkOptions#CLIENT}. See docs/zookeeper.md.
 *
 * <p>Layers: {@code ZkNodes} (the node layout and the queue rule) and {@code SessionDeadline} (the
 * loss rule) make no ZooKeeper calls; {@code ZkSession} and {@code SessionKeeper} keep the session;
 * {@code ZkLockBackend}, {@code ZkAttempt} and {@code ZkGrant} adapt them to the SPI.
 */
package dev.interlock.zk;
