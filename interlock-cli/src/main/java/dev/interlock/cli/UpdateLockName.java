package dev.interlock.cli;

import dev.interlock.file.internal.PercentEncoding;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The default lock name of {@code update}: one lock per file, so two files never share one.
 * A real path that is UTF-8 (nearly every path) is the name as it always was: {@code update:} and
 * the path. A Linux path is any bytes, though, and decoding one that is not UTF-8 replaces every
 * bad byte with U+FFFD, so files named with bytes 0xff and 0xfe shared one lock (and one whose
 * name holds a real U+FFFD shared it too). Those paths are named {@code update-bytes:} and their
 * bytes percent-encoded as the file backends encode names ({@code /srv/%FF}): a prefix no UTF-8
 * path's name has, and an encoding that decodes one way only.
 */
final class UpdateLockName {
    static final String PREFIX = "update:";
    static final String BYTES_PREFIX = "update-bytes:";

    private UpdateLockName() {}

    /** The lock name of the file whose real path is {@code realPath}; not yet validated as a lock name. */
    static String of(byte[] realPath) {
        try {
            return PREFIX
                    + StandardCharsets.UTF_8
                            .newDecoder()
                            .onMalformedInput(CodingErrorAction.REPORT)
                            .onUnmappableCharacter(CodingErrorAction.REPORT)
                            .decode(ByteBuffer.wrap(realPath));
        } catch (CharacterCodingException e) {
            return BYTES_PREFIX + PercentEncoding.encodeBytes(realPath).replace("%2F", "/");
        }
    }
}
