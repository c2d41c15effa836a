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
 * prelude, its own body and the shared library of functions, with the SHA-1 that {@code EVALSHA}
 * names it by. The library goes where the body has a line {@value #LIBRARY} (after its short
 * paths: Redis runs the whole text at each call, and a call that returns before the library
 * creates none of its functions), else right after the prelude.
 */
enum RedisScripts {
    ACQUIRE("acquire"),
    RENEW("renew"),
    RELEASE("release"),
    LEAVE("leave"),
    INSPECT("inspect");

    static final String LIBRARY = "--@library\n";

    final String source;
    final String sha;

    RedisScripts(String file) {
        String body = read(file);
        int at = body.indexOf(LIBRARY);
        String library = read("library");
        this.source = read("prelude") + "\n"
                + (at < 0
                        ? library + "\n" + body
                        : body.substring(0, at) + library + "\n" + body.substring(at + LIBRARY.length()));
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
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
