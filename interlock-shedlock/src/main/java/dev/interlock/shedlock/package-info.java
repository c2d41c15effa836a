/**
 * ShedLock on Interlock: {@link dev.interlock.shedlock.InterlockLockProvider} is a ShedLock
 * {@code LockProvider} (and {@code ExtensibleLockProvider}) over any lock space, and
 * {@link dev.interlock.shedlock.InterlockShedLock} gives the running task its fencing token. See
 * the README's ShedLock section for the migration from ShedLock's JDBC provider.
 */
package dev.interlock.shedlock;
