package dev.interlock.cli;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The command-line arguments as the bytes the kernel gave the JVM ({@code /proc/self/cmdline}).
 *
 * <p>The JVM decodes arguments with the locale's charset; under {@code LANG=C} (typical of cron)
 * every non-ASCII byte becomes a replacement character, so {@code interlock run x -- cp résumé.pdf
 * /backup} would run {@code cp r??sum??.pdf}. {@code run} therefore passes the command's raw bytes
 * to the child, and lock names are decoded as UTF-8 whatever the locale, so that a name means the
 * same lock in every environment.
 */
final class RawArgs {
    private RawArgs() {}

    /**
     * The raw bytes of {@code args}, or null if they cannot be read or do not line up with what
     * the JVM decoded (for example arguments that did not come from the kernel's argv).
     */
    static List<byte[]> read(String[] args) {
        byte[] all;
        // java.io, not java.nio: the channel, its buffers and the NIO file system cost a short
        // command's start more than the read.
        try (FileInputStream in = new FileInputStream("/proc/self/cmdline")) {
            all = in.readAllBytes();
        } catch (IOException | RuntimeException e) {
            return null;
        }
        List<byte[]> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < all.length; i++) {
            if (all[i] == 0) {
                byte[] p = new byte[i - start];
                System.arraycopy(all, start, p, 0, p.length);
                parts.add(p);
                start = i + 1;
            }
        }
        if (parts.size() < args.length) {
            return null;
        }
        List<byte[]> tail = parts.subList(parts.size() - args.length, parts.size());
        Charset jvm;
        try {
            jvm = Charset.forName(System.getProperty(
                    "sun.jnu.encoding", Charset.defaultCharset().name()));
        } catch (RuntimeException e) {
            jvm = Charset.defaultCharset();
        }
        for (int i = 0; i < args.length; i++) {
            if (!new String(tail.get(i), jvm).equals(args[i])) {
                return null;
            }
        }
        return List.copyOf(tail);
    }

    /** {@code args} with every argument whose raw bytes are valid UTF-8 decoded as UTF-8. */
    static String[] decodeUtf8(String[] args, List<byte[]> raw) {
        if (raw == null) {
            return args;
        }
        String[] out = args.clone();
        for (int i = 0; i < args.length; i++) {
            try {
                out[i] = StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(raw.get(i)))
                        .toString();
            } catch (CharacterCodingException e) {
                // keep the JVM's reading
            }
        }
        return out;
    }
}
