package dev.interlock.spi.support;

import dev.interlock.InvalidLockNameException;
import dev.interlock.LockSpace;

/** The rules every lock name obeys, and how messages quote a name; shared by the core and every backend. */
public final class LockNames {
    private LockNames() {}

    /**
     * Checks {@code name} against the rules in {@link LockSpace} and returns it.
     *
     * @throws NullPointerException if null
     * @throws InvalidLockNameException naming the broken rule and the offending position
     */
    public static String validate(String name) {
        if (name == null) {
            throw new NullPointerException("lock name must not be null");
        }
        if (name.isEmpty()) {
            throw new InvalidLockNameException(name, "lock name must not be empty");
        }
        if (name.length() > LockSpace.MAX_NAME_LENGTH) {
            throw new InvalidLockNameException(
                    name,
                    "lock name is " + name.length() + " characters long; the limit is " + LockSpace.MAX_NAME_LENGTH);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == 0) {
                throw new InvalidLockNameException(
                        name, "lock name must not contain NUL (U+0000), found at index " + i);
            }
            if (Character.isISOControl(c)) {
                throw new InvalidLockNameException(
                        name,
                        String.format(
                                "lock name must not contain control characters, found U+%04X at index %d", (int) c, i));
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new InvalidLockNameException(
                        name, "lock name must be valid Unicode: unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new InvalidLockNameException(
                        name, "lock name must be valid Unicode: unpaired surrogate at index " + i);
            }
        }
        return name;
    }

    /** The name quoted for messages, with anything unprintable escaped. */
    public static String quote(String name) {
        StringBuilder sb = new StringBuilder("'");
        name.codePoints().forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
                sb.append(String.format("\\u%04x", cp));
            } else {
                sb.appendCodePoint(cp);
            }
        });
        return sb.append('\'').toString();
    }
}
