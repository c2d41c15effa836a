package dev.interlock.spring.boot;

import dev.interlock.LockSpace;

/**
 * Wraps the auto-configured lock space before it becomes the {@code LockSpace} bean (the
 * observations do: {@link ObservedLockSpace}). An interface of the starter's own, with no
 * Micrometer type in it, so that the main auto-configuration loads without Micrometer.
 */
@FunctionalInterface
interface LockSpaceWrapper {
    /** The space to publish instead of {@code space}; closing it must close {@code space}. */
    LockSpace wrap(LockSpace space);
}
