package dev.interlock.jdbc;

import dev.interlock.spi.support.BackendFailures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Where the database password comes from when the URL does not carry one, so that it need not
 * appear on a command line (where {@code ps} shows it to every user): a password file named by
 * the {@code passwordFile=PATH} option (first line; readable by its owner only, like libpq's
 * {@code .pgpass}), else the environment variable {@value #ENV}. A password in the URL or in the
 * given properties wins.
 */
final class Credentials {
    static final String ENV = "INTERLOCK_JDBC_PASSWORD";

    private Credentials() {}

    static Properties withPassword(
            String driverUrl, Properties given, String passwordFile, UnaryOperator<String> env, String description) {
        if (hasPassword(driverUrl, given)) {
            if (passwordFile != null) {
                throw new IllegalArgumentException(
                        "'" + description + "' has a password and a passwordFile; give one of them");
            }
            return given;
        }
        String password = null;
        if (passwordFile != null) {
            password = read(Path.of(passwordFile), description);
        } else {
            String e = env.apply(ENV);
            if (e != null && !e.isEmpty()) {
                password = e;
            }
        }
        if (password == null) {
            return given;
        }
        Properties p = new Properties();
        p.putAll(given);
        p.setProperty("password", password);
        return p;
    }

    /** A password in the URL's user info ({@code //user:pw@}), as a {@code password=} parameter, or in the properties. */
    static boolean hasPassword(String driverUrl, Properties given) {
        if (given.stringPropertyNames().stream().anyMatch(n -> n.equalsIgnoreCase("password"))) {
            return true;
        }
        String lower = driverUrl.toLowerCase(Locale.ROOT);
        return lower.matches("(?s).*//[^/@?;]*:[^/@?;]*@.*") || lower.matches("(?s).*[?&;]password=.*");
    }

    private static String read(Path file, String description) {
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new BackendFailures(description)
                        .refused(
                                null,
                                "the password file " + file
                                        + " is not a regular file (a link or a directory is refused)",
                                null);
            }
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            if (perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)) {
                throw new BackendFailures(description)
                        .refused(
                                null,
                                "the password file " + file + " can be read by others than its owner: run 'chmod 600 "
                                        + file + "'",
                                null);
            }
            String text = Files.readString(file, StandardCharsets.UTF_8);
            int nl = text.indexOf('\n');
            String line = (nl < 0 ? text : text.substring(0, nl)).replace("\r", "");
            if (line.isEmpty()) {
                throw new BackendFailures(description).refused(null, "the password file " + file + " is empty", null);
            }
            return line;
        } catch (IOException e) {
            throw new BackendFailures(description)
                    .refused(
                            null,
                            "cannot read the password file " + file + ": "
                                    + (e instanceof NoSuchFileException
                                            ? "no such file"
                                            : e instanceof AccessDeniedException ? "permission denied" : "I/O error"),
                            null);
        }
    }
}
