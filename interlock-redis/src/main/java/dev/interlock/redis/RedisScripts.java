package dev.interlock.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts of the store (src/main/resources/dev/interlock/redis/*.lua), each the shared
 * prelude plus its own body, with the SHA-1 that {@code EVALSHA} names it by.
 */
enum RedisScripts {
    ACQUIRE("acquire"),
    RENEW("renew"),
    RELEASE("release"),
    LEAVE("leave"),
    INSPECT("inspect");

    final String source;
    final String sha;

    RedisScripts(String file) {
        this.source = read("prelude") + "\n" + read(file);
        this.sha = sha1(source);
    }

    private static String read(String file) {
        try (InputStream in = RedisScripts.class.getResourceAsStream(file + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("missing resource dev/interlock/redis/" + file + ".lua");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
