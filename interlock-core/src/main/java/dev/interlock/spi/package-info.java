/**
 * For backend authors: a {@link dev.interlock.spi.LockBackendProvider} registered with
 * {@link java.util.ServiceLoader} opens a {@link dev.interlock.spi.LockBackend}, which makes
 * single non-blocking state changes ({@link dev.interlock.spi.Attempt#tryAcquire()}) and knows how
 * to wait for a change ({@link dev.interlock.spi.Attempt#await(long)}). The core runs the wait
 * loop, deadlines, interrupts and lease renewal. Every backend should pass
 * {@code dev.interlock.testkit.LockSpaceContract} and the multi-process checker.
 */
package dev.interlock.spi;
