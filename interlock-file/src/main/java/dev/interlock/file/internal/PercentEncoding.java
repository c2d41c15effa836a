package dev.interlock.file.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;

/**
 * Internal API of the file backends (not for applications; may change in any release): the
 * percent-encoding both map lock names to file names with. Bytes of the UTF-8 form outside
 * {@code [A-Za-z0-9._-]} become {@code %XX} (upper-case hex); {@code %} itself is always escaped,
 * so an encoding decodes one way only.
 */
public final class PercentEncoding {
    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private PercentEncoding() {}

    /** True for the characters kept as they are: {@code [A-Za-z0-9._-]}. */
    public static boolean keep(int c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '.'
                || c == '_'
                || c == '-';
    }

    /** The encoding of {@code s}'s UTF-8 bytes. */
    public static String encode(String s) {
        return encodeBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    /** The encoding of any bytes (a Linux file name need not be UTF-8). */
    public static String encodeBytes(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            int c = b & 0xff;
            if (keep(c)) {
                sb.append((char) c);
            } else {
                sb.append('%').append(HEX[c >> 4]).append(HEX[c & 0xf]);
            }
        }
        return sb.toString();
    }

    /** Decodes any well-formed encoding (lower-case hex accepted); empty if malformed. */
    public static Optional<String> decode(String enc) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(enc.length());
        for (int i = 0; i < enc.length(); i++) {
            char c = enc.charAt(i);
            if (c == '%') {
                if (i + 2 >= enc.length()) {
                    return Optional.empty();
                }
                int hi = Character.digit(enc.charAt(i + 1), 16);
                int lo = Character.digit(enc.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return Optional.empty();
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if (keep(c)) {
                out.write(c);
            } else {
                return Optional.empty();
            }
        }
        return Optional.of(new String(out.toByteArray(), StandardCharsets.UTF_8));
    }

    /**
     * Decodes only the canonical encoding of a string (the one {@link #encode} makes), so that a
     * name-to-file mapping built on it stays a bijection; empty otherwise.
     */
    public static Optional<String> decodeCanonical(String enc) {
        return decode(enc).filter(s -> encode(s).equals(enc));
    }

    /** Lower-case hex SHA-256 of {@code s}'s UTF-8 bytes. */
    public static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
