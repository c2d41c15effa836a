package dev.interlock.file.flock;

import dev.interlock.file.internal.PercentEncoding;
import java.util.Optional;

/**
 * Maps lock names to file names inside the lock directory, injectively and without escape:
 * <ol>
 *   <li>A <em>plain</em> name, made only of {@code [A-Za-z0-9._-]}, not starting with {@code .} and at
 *       most {@value #MAX_PLAIN} characters, is its own file name: {@code nightly} is {@code DIR/nightly},
 *       so util-linux {@code flock DIR/nightly} interoperates.</li>
 *   <li>Any other name is {@code .x-} followed by its UTF-8 bytes, where {@code [A-Za-z0-9._-]} stay
 *       and every other byte becomes {@code %XX}: {@code a/b} is {@code .x-a%2Fb}, {@code ../x} is
 *       {@code .x-..%2Fx}.</li>
 *   <li>If that is longer than {@value #MAX_ENCODED} characters, the file is {@code .h-} followed by
 *       the hex SHA-256 of the name's UTF-8 bytes, and the lock file records the full name (checked
 *       on every acquire).</li>
 * </ol>
 * Plain file names never start with {@code .}, encoded ones always start with {@code .x-} or
 * {@code .h-}, and {@code %} appears in an encoded name only as an escape: no two names share a
 * file, and no file name contains {@code /} or is {@code .} or {@code ..}.
 */
final class NameMapping {
    static final int MAX_PLAIN = 200;
    static final int MAX_ENCODED = 200;
    static final String ENCODED_PREFIX = ".x-";
    static final String HASHED_PREFIX = ".h-";

    private NameMapping() {}

    static boolean isPlain(String name) {
        if (name.isEmpty() || name.length() > MAX_PLAIN || name.charAt(0) == '.') {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (!keep(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean keep(int c) {
        return PercentEncoding.keep(c);
    }

    /** The file name of a (validated) lock name. */
    static String fileName(String name) {
        if (isPlain(name)) {
            return name;
        }
        String enc = ENCODED_PREFIX + encode(name);
        if (enc.length() <= MAX_ENCODED) {
            return enc;
        }
        return HASHED_PREFIX + sha256Hex(name);
    }

    /** True if the file name is a hashed one, whose lock file must carry the full name. */
    static boolean isHashed(String fileName) {
        return fileName.startsWith(HASHED_PREFIX);
    }

    /** Percent-encoding of the UTF-8 bytes, keeping {@code [A-Za-z0-9._-]}. */
    static String encode(String name) {
        return PercentEncoding.encode(name);
    }

    /** Inverse of {@link #encode} for canonical encodings only (keeps the mapping a bijection). */
    static Optional<String> decode(String enc) {
        return PercentEncoding.decodeCanonical(enc);
    }

    /** The lock name of a file in the lock directory, or empty if the file is not a lock file (hashed names: see the record). */
    static Optional<String> nameOf(String fileName) {
        if (fileName.startsWith(ENCODED_PREFIX)) {
            return decode(fileName.substring(ENCODED_PREFIX.length()));
        }
        if (fileName.startsWith(".")) {
            return Optional.empty();
        }
        return isPlain(fileName) ? Optional.of(fileName) : Optional.empty();
    }

    static String sha256Hex(String name) {
        return PercentEncoding.sha256Hex(name);
    }
}
