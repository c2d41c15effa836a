package dev.interlock.spi;

import dev.interlock.Mode;
import dev.interlock.Owner;
import java.time.Duration;

/**
 * One acquisition asked of a backend. The name has already been validated by the core.
 *
 * @param name the lock name
 * @param mode shared or exclusive
 * @param owner unique to this acquisition
 * @param lease lease duration for lease-based backends
 */
public record AcquireSpec(String name, Mode mode, Owner owner, Duration lease) {}
