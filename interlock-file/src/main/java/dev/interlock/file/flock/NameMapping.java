package dev.interlock.file.flock;

import dev.interlock.file.internal.FileNameMapping;
import dev.interlock.file.internal.PercentEncoding;
import java.util.Optional;

/**
 * Maps lock names to file names inside the lock directory, injectively and without escape (the
 * file backends' one {@link FileNameMapping}, with this backend's prefixes {@code .x-} and {@code .h-}):
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
    static final int MAX_PLAIN = FileNameMapping.MAX_PLAIN;
    static final int MAX_ENCODED = FileNameMapping.MAX_ENCODED;
    static final String ENCODED_PREFIX = ".x-";
    static final String HASHED_PREFIX = ".h-";
    private static final FileNameMapping MAPPING = new FileNameMapping(ENCODED_PREFIX, HASHED_PREFIX);

    private NameMapping() {}

    static boolean isPlain(String name) {
        return FileNameMapping.isPlain(name);
    }

    /** The file name of a (validated) lock name. */
    static String fileName(String name) {
        return MAPPING.fileName(name);
    }

    /** True if the file name is a hashed one, whose lock file must carry the full name. */
    static boolean isHashed(String fileName) {
        return MAPPING.isHashed(fileName);
    }

    /** Percent-encoding of the UTF-8 bytes, keeping {@code [A-Za-z0-9._-]} (for the name in a lock file's record). */
    static String encode(String name) {
        return PercentEncoding.encode(name);
    }

    /** Inverse of {@link #encode} for canonical encodings only. */
    static Optional<String> decode(String enc) {
        return PercentEncoding.decodeCanonical(enc);
    }

    /** The lock name of a file in the lock directory, or empty if the file is not a lock file (hashed names: see the record). */
    static Optional<String> nameOf(String fileName) {
        return MAPPING.nameOf(fileName);
    }

    static String sha256Hex(String name) {
        return PercentEncoding.sha256Hex(name);
    }
}
