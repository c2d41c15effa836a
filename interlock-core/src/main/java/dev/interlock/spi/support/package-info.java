/**
 * What every backend builds on, first-party or not: the wake-up primitive
 * ({@link dev.interlock.spi.support.ChangeSignal}), the polling law
 * ({@link dev.interlock.spi.support.Backoff}), a waiter's queue place
 * ({@link dev.interlock.spi.support.QueuePlace}), URI options and durations
 * ({@link dev.interlock.spi.support.UriOptions}, {@link dev.interlock.spi.support.Durations}),
 * failures worded one way ({@link dev.interlock.spi.support.BackendFailures}), and what
 * Interlock's own backends share (name quoting, password masking, bounded barging, the process
 * identity, a paced timer, a lazy logger). docs/spi.md, "Usage", says in what order to use them;
 * {@code dev.interlock.mem.MemoryBackend} is the reference user.
 */
package dev.interlock.spi.support;
