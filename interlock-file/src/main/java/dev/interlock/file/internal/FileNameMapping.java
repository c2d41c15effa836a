package dev.interlock.file.internal;

import java.util.Optional;

/**
 * Internal API: the one mapping from lock names to file names of the file backends, injective
 * and escape-proof; each backend chooses its two prefixes ({@code flock:} {@code .x-} and
 * {@code .h-}, {@code dir:} {@code %} and {@code #}), which are part of its on-disk format.
 * <ol>
 *   <li><b>plain</b>: 1 to {@value #MAX_PLAIN} characters of {@code [A-Za-z0-9._-]}, not starting
 *       with {@code .}: the name itself ({@code nightly-report});</li>
 *   <li><b>encoded</b>: otherwise the encoded prefix and the UTF-8 bytes with every byte outside
 *       {@code [A-Za-z0-9._-]} written {@code %XX} (upper-case hex), if at most
 *       {@value #MAX_ENCODED} characters in all ({@code a/b} becomes {@code .x-a%2Fb} or
 *       {@code %a%2Fb});</li>
 *   <li><b>hashed</b>: otherwise the hashed prefix and the lower-case hex SHA-256 of the UTF-8
 *       name; the backend keeps the full name beside it and checks it.</li>
 * </ol>
 * Plain names never start with {@code .} and the prefixes do (or are not plain characters), so
 * the forms never collide; only the canonical encoding of a name is read back, so the mapping is
 * a bijection on what it produces. No form contains {@code /} or is {@code .} or {@code ..}.
 */
public final class FileNameMapping {
    public static final int MAX_PLAIN = 200;
    public static final int MAX_ENCODED = 200;

    private final String encodedPrefix;
    private final String hashedPrefix;

    /**
     * @param encodedPrefix starts encoded names; must not be a plain name's start
     * @param hashedPrefix starts hashed names; must differ from the encoded prefix's first character
     */
    public FileNameMapping(String encodedPrefix, String hashedPrefix) {
        if (isPlain(encodedPrefix)
                || isPlain(hashedPrefix)
                || encodedPrefix.charAt(0) == hashedPrefix.charAt(0) && encodedPrefix.startsWith(hashedPrefix)) {
            throw new IllegalArgumentException("prefixes must not start a plain name nor each other");
        }
        this.encodedPrefix = encodedPrefix;
        this.hashedPrefix = hashedPrefix;
    }

    /** True for a name that is its own file name. */
    public static boolean isPlain(String name) {
        if (name.isEmpty() || name.length() > MAX_PLAIN || name.charAt(0) == '.') {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            if (!PercentEncoding.keep(name.charAt(i))) {
                return false;
            }
        }
        return true;
    }

    /** The file name of a (validated) lock name. */
    public String fileName(String name) {
        if (isPlain(name)) {
            return name;
        }
        String enc = encodedPrefix + PercentEncoding.encode(name);
        return enc.length() <= MAX_ENCODED ? enc : hashedPrefix + PercentEncoding.sha256Hex(name);
    }

    /** True if {@code fileName} is the hashed form, whose lock name must be read from the record kept beside it. */
    public boolean isHashed(String fileName) {
        return fileName.startsWith(hashedPrefix) && fileName.length() == hashedPrefix.length() + 64;
    }

    /**
     * The lock name of a plain or encoded file name; empty for the hashed form and for file names
     * no lock name produces (foreign files, non-canonical encodings).
     */
    public Optional<String> nameOf(String fileName) {
        if (fileName.startsWith(encodedPrefix)) {
            return PercentEncoding.decode(fileName.substring(encodedPrefix.length()))
                    .filter(n -> fileName(n).equals(fileName));
        }
        return isPlain(fileName) ? Optional.of(fileName) : Optional.empty();
    }
}
