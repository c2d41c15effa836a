package dev.interlock.cli;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The lock space used when neither {@code --backend} nor {@code $INTERLOCK_BACKEND} is given:
 * {@code flock:} on a private per-user directory, {@code ~/.local/state/interlock/locks}, or
 * {@code /tmp/interlock-<uid>} when the home directory is not writable.
 *
 * <p>The directory is created with mode 0700 by the commands that lock ({@code run},
 * {@code update}); the commands that only read ({@code status}, {@code list}, {@code break})
 * create nothing and report a missing one as "no lock space" (exit 69), so a typo or a fresh
 * account never leaves directories behind. An existing one is refused if it belongs to another
 * user, is writable by group or others, or (in {@code /tmp}) is a symbolic link: anyone who can
 * write there could delete or replace lock files and so break the exclusion.
 */
final class DefaultBackend {
    static final String ENV = "INTERLOCK_BACKEND";

    private DefaultBackend() {}

    /** The URI to use: explicit, else the environment, else the private directory (created and checked here). */
    static String resolve(String explicit, Env env) {
        return resolve(explicit, env, true);
    }

    /**
     * The URI to use: explicit, else the environment, else the private directory, checked here and
     * created only if {@code create} (the commands that lock); a missing one is exit 69 otherwise.
     */
    static String resolve(String explicit, Env env, boolean create) {
        if (explicit != null) {
            if (explicit.isBlank()) {
                throw new CliException(ExitCodes.USAGE, "--backend is empty: give a URI such as flock:/var/lock/myapp");
            }
            return explicit;
        }
        String fromEnv = env.get(ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
            return fromEnv;
        }
        return "flock:" + privateDirectory(env, create);
    }

    /** Finds, creates if needed and allowed, and checks the private per-user directory. */
    static Path privateDirectory(Env env, boolean create) {
        Path home = env.home();
        boolean homeUsable = home != null && home.isAbsolute() && Files.isDirectory(home) && Files.isWritable(home);
        Path dir;
        boolean inTmp;
        if (homeUsable) {
            dir = home.resolve(".local/state/interlock/locks");
            inTmp = false;
        } else {
            dir = env.tmpRoot().resolve("interlock-" + env.uid());
            inTmp = true;
        }
        if (create) {
            create(dir);
        } else if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE, "no lock space at " + dir + " (nothing has been locked there yet)");
        }
        check(dir, env.uid(), inTmp);
        return dir;
    }

    /** Creates {@code dir} with mode 0700; missing parents (~/.local/state/interlock) get the umask's mode. */
    private static void create(Path dir) {
        try {
            if (!Files.isDirectory(dir)) {
                Path parent = dir.getParent();
                if (parent != null && !Files.isDirectory(parent)) {
                    Files.createDirectories(parent);
                }
                Files.createDirectory(
                        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "the default lock directory " + dir
                                + " exists but is not a directory: remove it, or choose a directory with --backend flock:/DIR"
                                + " or $" + ENV);
            }
        } catch (AccessDeniedException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot create the default lock directory " + dir
                            + ": permission denied on " + e.getFile()
                            + "; fix its permissions, or choose a directory with"
                            + " --backend flock:/DIR or $" + ENV,
                    e);
        } catch (IOException | UnsupportedOperationException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot create the default lock directory " + dir + ": "
                            + (e instanceof UnsupportedOperationException
                                    ? "its file system has no POSIX permissions"
                                    : e.getMessage() != null ? e.getMessage() : "I/O error")
                            + "; fix that, or choose a directory with --backend flock:/DIR or $" + ENV,
                    e);
        }
    }

    private static void check(Path dir, long uid, boolean inTmp) {
        try {
            if (inTmp && Files.isSymbolicLink(dir)) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "the default lock directory " + dir
                                + " is a symbolic link, which someone else may have planted: remove it (rm " + dir
                                + ") or choose a directory with --backend flock:/DIR or $" + ENV);
            }
            long owner = ((Number) Files.getAttribute(dir, "unix:uid")).longValue();
            int mode = (Integer) Files.getAttribute(dir, "unix:mode") & 07777;
            if (uid >= 0 && owner != uid) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        "the default lock directory " + dir + " belongs to uid "
                                + owner + ", not to you (uid " + uid
                                + "), so its owner could tamper with your locks: remove it,"
                                + " or choose a directory with --backend flock:/DIR or $" + ENV);
            }
            if ((mode & 022) != 0) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        String.format(
                                "the default lock directory %s is writable"
                                        + " by %s (mode %04o), so others could remove or replace your lock files: run 'chmod 700 %s',"
                                        + " or choose a directory with --backend flock:/DIR or $%s",
                                dir, (mode & 002) != 0 ? "others" : "its group", mode, dir, ENV));
            }
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot check the default lock directory " + dir + ": "
                            + (e instanceof FileSystemException && ((FileSystemException) e).getReason() != null
                                    ? ((FileSystemException) e).getReason()
                                    : e.getMessage()),
                    e);
        }
        if (!Files.isWritable(dir)) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "the default lock directory " + dir + " is not writable:" + " run 'chmod 700 " + dir
                            + "', or choose a directory with --backend flock:/DIR or $" + ENV);
        }
    }
}
