package dev.interlock.jdbc;

/** Limits of the owner columns, which every DDL in docs/jdbc.md declares as 512 characters. */
final class Owners {
    static final int MAX_LENGTH = 512;

    private Owners() {}

    static String check(String owner) {
        if (owner.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("owner id is " + owner.length()
                    + " characters long; the lock table holds " + MAX_LENGTH + " (is the host name that long?)");
        }
        return owner;
    }
}
