package dev.interlock.spi.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;

/**
 * A password kept in a file rather than in a URI, where {@code ps} shows it to every user: its
 * first line, from a regular file that only its owner may read (as libpq's {@code .pgpass}). For
 * the {@code passwordFile=PATH} option of the backends that take a password.
 */
public final class PasswordFile {
    private PasswordFile() {}

    /**
     * @param description the backend's {@code description()}, for the message
     * @return the file's first line, without its line end
     * @throws dev.interlock.LockBackendException saying what is wrong with the file (never its content)
     */
    public static String read(Path file, String description) {
        BackendFailures failures = new BackendFailures(description);
        try {
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                throw failures.refused(
                        null,
                        "the password file " + file + " is not a regular file (a link or a directory is refused)",
                        null);
            }
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            if (perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)) {
                throw failures.refused(
                        null,
                        "the password file " + file + " can be read by others than its owner: run 'chmod 600 " + file
                                + "'",
                        null);
            }
            String text = Files.readString(file, StandardCharsets.UTF_8);
            int nl = text.indexOf('\n');
            String line = (nl < 0 ? text : text.substring(0, nl)).replace("\r", "");
            if (line.isEmpty()) {
                throw failures.refused(null, "the password file " + file + " is empty", null);
            }
            return line;
        } catch (IOException e) {
            throw failures.refused(
                    null,
                    "cannot read the password file " + file + ": "
                            + (e instanceof NoSuchFileException
                                    ? "no such file"
                                    : e instanceof AccessDeniedException ? "permission denied" : "I/O error"),
                    null);
        }
    }
}
