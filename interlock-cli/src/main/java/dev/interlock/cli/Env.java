package dev.interlock.cli;

import java.io.FileInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
        return new Env(
                System.getenv(),
                home == null || home.isEmpty() || "?".equals(home) ? null : Path.of(home),
                currentUid(),
                Path.of("/tmp"));
    }

    String get(String name) {
        return vars.get(name);
    }

    /** The real uid, from /proc/self/status (no native call needed). */
    static long currentUid() {
        String uid = statusField("Uid");
        return uid == null ? -1 : firstNumber(uid, 0);
    }

    /**
     * The value of the {@code name:} line of /proc/self/status (after the colon, untrimmed), or
     * null where there is none (not Linux). The file is read once per process (its first use:
     * the uid, at start), so that a run reads it once for the uid and the signals ignored at start.
     */
    static String statusField(String name) {
        String text = SelfStatus.TEXT;
        String key = name + ":";
        int at = text.startsWith(key) ? 0 : text.indexOf("\n" + key);
        if (at < 0) {
            return null;
        }
        int from = (at == 0 ? 0 : at + 1) + key.length();
        int end = text.indexOf('\n', from);
        return text.substring(from, end < 0 ? text.length() : end);
    }

    /** /proc/self/status as first read, or "" (not Linux). */
    private static final class SelfStatus {
        static final String TEXT = read();

        /** Through java.io: java.nio's file channels would load and set up their native library. */
        private static String read() {
            try (FileInputStream in = new FileInputStream("/proc/self/status")) {
                return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            } catch (IOException | RuntimeException e) {
                return "";
            }
        }
    }

    /**
     * The first run of digits of {@code line} from {@code from} ("Uid:\t1000\t1000..." gives 1000),
     * or -1. By hand: String.split with a regular expression would compile one, a few milliseconds
     * of a start on JDK 17.
     */
    static long firstNumber(String line, int from) {
        int i = from;
        while (i < line.length() && !Character.isDigit(line.charAt(i))) {
            i++;
        }
        int start = i;
        while (i < line.length() && Character.isDigit(line.charAt(i))) {
            i++;
        }
        return i > start ? Long.parseLong(line.substring(start, i)) : -1;
    }
}
