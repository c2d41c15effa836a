package dev.interlock.file.dir;

import dev.interlock.file.internal.FileNameMapping;
import dev.interlock.file.internal.PercentEncoding;
import java.util.Optional;

/**
 * The injective mapping from lock names to directory names in the lock space: the file backends'
 * one {@link FileNameMapping}, with this backend's prefixes {@code %} and {@code #}.
 *
 * <ul>
 *   <li><b>plain</b>: a name of 1 to {@value #MAX_PLAIN} characters from {@code [A-Za-z0-9._-]} that
 *       does not start with {@code .} is its own directory name ({@code nightly-report});</li>
 *   <li><b>encoded</b>: any other name becomes {@code %} followed by its UTF-8 bytes, where every
 *       byte outside {@code [A-Za-z0-9._-]} is written {@code %XX} (upper-case hex), if that is at
 *       most {@value #MAX_ENCODED} characters ({@code a/b} becomes {@code %a%2Fb});</li>
 *   <li><b>hashed</b>: otherwise {@code #} followed by the lower-case hex SHA-256 of the UTF-8
 *       name; the full name is kept in the lock directory's {@code name} record and checked.</li>
 * </ul>
 * The three forms start with different characters, so they never collide with each other; the
 * first two are reversible. No form contains {@code /} or is {@code .} or {@code ..}.
 */
final class DirNames {
    static final int MAX_PLAIN = FileNameMapping.MAX_PLAIN;
    static final int MAX_ENCODED = FileNameMapping.MAX_ENCODED;
    private static final FileNameMapping MAPPING = new FileNameMapping("%", "#");

    private DirNames() {}

    static boolean isPlainChar(int c) {
        return PercentEncoding.keep(c);
    }

    /** The directory name of lock {@code name} (already validated by the core). */
    static String encode(String name) {
        return MAPPING.fileName(name);
    }

    /** True if {@code dirName} is the hashed form, whose lock name must be read from its record. */
    static boolean isHashed(String dirName) {
        return MAPPING.isHashed(dirName);
    }

    /**
     * The lock name of a plain or encoded directory name; empty for the hashed form and for names
     * that no lock name produces (foreign files).
     */
    static Optional<String> decode(String dirName) {
        return MAPPING.nameOf(dirName);
    }

    /** Percent-encodes {@code s} completely for a record line (reversible, one line, ASCII). */
    static String recordEscape(String s) {
        return PercentEncoding.encode(s);
    }

    static Optional<String> recordUnescape(String s) {
        return PercentEncoding.decode(s);
    }
}
