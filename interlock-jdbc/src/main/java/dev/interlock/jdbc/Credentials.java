package dev.interlock.jdbc;

import dev.interlock.spi.support.PasswordFile;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;
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
            password = PasswordFile.read(Path.of(passwordFile), description);
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
}
