package dev.interlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The primary key of a name's row: the SHA-256 of its UTF-8 bytes, in lower-case hex. A fixed,
 * short key lets names of any length up to the API limit fit every database's index limit
 * (InnoDB: 3072 bytes; PostgreSQL b-tree: about 2700), while the full name is kept in its own
 * column and checked by every statement that changes the row.
 */
final class NameKey {
    private NameKey() {}

    static String of(String name) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(md.digest(name.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
