package dev.interlock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * What the tool reads from its surroundings: environment variables, the home directory, the
 * user id and the directory for the fallback lock directory. Injected so tests can run the
 * commands in-process against a made-up home.
 *
 * @param vars environment variables
 * @param home the user's home directory ({@code user.home}); may be null if unknown
 * @param uid the real user id
 * @param tmpRoot where the fallback {@code interlock-<uid>} directory goes ({@code /tmp})
 */
record Env(Map<String, String> vars, Path home, long uid, Path tmpRoot) {
    Env {
        Objects.requireNonNull(vars, "vars");
        Objects.requireNonNull(tmpRoot, "tmpRoot");
    }

    static Env system() {
        String home = System.getProperty("user.home");
        return new Env(System.getenv(), home == null || home.isEmpty() || "?".equals(home) ? null : Path.of(home),
                currentUid(), Path.of("/tmp"));
    }

    String get(String name) {
        return vars.get(name);
    }

    /** The real uid, from /proc/self/status (no native call needed). */
    static long currentUid() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).trim().split("\\s+")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall through
        }
        return -1;
    }
}
