/**
 * The {@code mem:} backend: locks in this JVM's memory. The reference implementation of the SPI
 * and a test double with hooks to make it fail on purpose; see {@link dev.interlock.mem.MemoryBackend}.
 */
package dev.interlock.mem;
