/**
 * Named locks across threads, processes, hosts and clusters.
 *
 * <p>Open a {@link dev.interlock.LockSpace} with {@link dev.interlock.Interlock#open(String)},
 * acquire {@link dev.interlock.Lease}s from it, close them to release. Every type here is the
 * public API; {@code dev.interlock.spi} is for backend authors; {@code dev.interlock.internal}
 * is internal and may change in any release.
 */
package dev.interlock;
