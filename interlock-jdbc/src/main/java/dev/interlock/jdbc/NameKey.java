package dev.interlock.jdbc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The primary key of a name's row: the SHA-256 of its UTF-8 bytes, in lower-case hex. A fixed,
 * short key lets names of any length up to the API limit fit every database's index limit
 * (InnoDB: 3072 bytes; PostgreSQL b-tree: about 2700), while the full name is kept in its own
 * column and checked by every statement that changes the row.
 *
 * <p>Every operation needs the key, several times per acquire and release: keys of names up to
 * {@link #CACHED_NAME_MAX} characters are kept (at most {@link #CACHE_MAX} of them, forgotten all
 * at once when full), and a digest is kept per thread, since looking one up costs more than the
 * hashing (measured: 12% of the client's CPU with 8 threads on 8 names before).
 */
final class NameKey {
    static final int CACHE_MAX = 4096;
    static final int CACHED_NAME_MAX = 128;
    private static final ConcurrentHashMap<String, String> CACHE = new ConcurrentHashMap<>();
    private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    });

    private NameKey() {}

    static String of(String name) {
        String key = CACHE.get(name);
        if (key != null) {
            return key;
        }
        MessageDigest md = DIGEST.get();
        md.reset();
        key = HexFormat.of().formatHex(md.digest(name.getBytes(StandardCharsets.UTF_8)));
        if (name.length() <= CACHED_NAME_MAX) {
            if (CACHE.size() >= CACHE_MAX) {
                CACHE.clear();
            }
            CACHE.put(name, key);
        }
        return key;
    }

    /** How many keys are kept now; for tests. */
    static int cached() {
        return CACHE.size();
    }
}
