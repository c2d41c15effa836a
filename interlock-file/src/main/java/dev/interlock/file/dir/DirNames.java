package dev.interlock.file.dir;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The injective mapping from lock names to directory names in the lock space.
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
    static final int MAX_PLAIN = 200;
    static final int MAX_ENCODED = 200;

    private DirNames() {}

    static boolean isPlainChar(int c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    }

    /** The directory name of lock {@code name} (already validated by the core). */
    static String encode(String name) {
        if (name.length() <= MAX_PLAIN && name.charAt(0) != '.' && name.chars().allMatch(DirNames::isPlainChar)) {
            return name;
        }
        byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(utf8.length + 1).append('%');
        for (byte b : utf8) {
            int c = b & 0xff;
            if (isPlainChar(c)) {
                sb.append((char) c);
            } else {
                sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
            if (sb.length() > MAX_ENCODED) {
                return "#" + sha256(utf8);
            }
        }
        return sb.toString();
    }

    /** True if {@code dirName} is the hashed form, whose lock name must be read from its record. */
    static boolean isHashed(String dirName) {
        return dirName.startsWith("#") && dirName.length() == 65;
    }

    /**
     * The lock name of a plain or encoded directory name; empty for the hashed form and for names
     * that no lock name produces (foreign files).
     */
    static Optional<String> decode(String dirName) {
        if (dirName.isEmpty()) {
            return Optional.empty();
        }
        if (dirName.charAt(0) == '%') {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int i = 1; i < dirName.length(); i++) {
                char c = dirName.charAt(i);
                if (c == '%') {
                    if (i + 2 >= dirName.length()) {
                        return Optional.empty();
                    }
                    int hi = Character.digit(dirName.charAt(i + 1), 16);
                    int lo = Character.digit(dirName.charAt(i + 2), 16);
                    if (hi < 0 || lo < 0) {
                        return Optional.empty();
                    }
                    out.write(hi << 4 | lo);
                    i += 2;
                } else if (isPlainChar(c)) {
                    out.write(c);
                } else {
                    return Optional.empty();
                }
            }
            String name = new String(out.toByteArray(), StandardCharsets.UTF_8);
            // Only the canonical encoding of a name is accepted, so the mapping stays a bijection.
            return encode(name).equals(dirName) ? Optional.of(name) : Optional.empty();
        }
        return encode(dirName).equals(dirName) ? Optional.of(dirName) : Optional.empty();
    }

    static String sha256(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }

    /** Percent-encodes {@code s} completely for a record line (reversible, one line, ASCII). */
    static String recordEscape(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (isPlainChar(c)) {
                sb.append((char) c);
            } else {
                sb.append(String.format("%%%02X", c));
            }
        }
        return sb.toString();
    }

    static Optional<String> recordUnescape(String s) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length()) {
                    return Optional.empty();
                }
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return Optional.empty();
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (isPlainChar(c)) {
                out.write(c);
            } else {
                return Optional.empty();
            }
        }
        return Optional.of(new String(out.toByteArray(), StandardCharsets.UTF_8));
    }
}
