package dev.interlock.cli;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Removing and copying the files of a verify run. Removals in directories others may write (the
 * lock directory, a shared run directory) go through directory descriptors
 * ({@link SecureDirectoryStream}: openat, unlinkat) and never follow a symbolic link, so a link
 * planted mid-way cannot turn a cleanup into the removal of someone else's files.
 */
final class VerifyFiles {
    private VerifyFiles() {}

    /** Removes {@code dir/name} and everything under it. Best effort: what cannot be removed stays. */
    static void deleteTree(Path dir, String name) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            if (ds instanceof SecureDirectoryStream) {
                deleteIn((SecureDirectoryStream<Path>) ds, Path.of(name));
            }
        } catch (IOException | RuntimeException e) {
            // left behind
        }
    }

    /** Removes a whole tree given by its path (its parent is opened, then everything below through descriptors). */
    static void deleteTree(Path root) {
        Path abs = root.toAbsolutePath();
        if (abs.getParent() != null) {
            deleteTree(abs.getParent(), abs.getFileName().toString());
        }
    }

    private static void deleteIn(SecureDirectoryStream<Path> parent, Path name) throws IOException {
        BasicFileAttributes a = parent.getFileAttributeView(
                        name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
        if (a.isDirectory()) {
            try (SecureDirectoryStream<Path> child = parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                List<Path> entries = new ArrayList<>();
                for (Path e : child) {
                    entries.add(e.getFileName());
                }
                for (Path e : entries) {
                    try {
                        deleteIn(child, e);
                    } catch (IOException ex) {
                        // keep going: remove what can be removed
                    }
                }
            }
            parent.deleteDirectory(name);
        } else {
            parent.deleteFile(name); // a link is removed itself, never followed
        }
    }

    /**
     * Removes the lock's own files after a run on a name verify made up (nobody else knows it, and
     * every worker is gone): {@code flock:} the regular files DIR/NAME and DIR/.gates/NAME,
     * {@code dir:} the directory DIR/NAME with what is in it. Best effort: a failure leaves an
     * unused lock file, which {@code interlock list} shows as free.
     */
    static void removeLockFiles(String scheme, Path lockDir, String lockName) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(lockDir)) {
            if (!(ds instanceof SecureDirectoryStream)) {
                return;
            }
            SecureDirectoryStream<Path> dir = (SecureDirectoryStream<Path>) ds;
            Path name = Path.of(lockName);
            if (scheme.equals("flock")) {
                deleteRegular(dir, name);
                try (SecureDirectoryStream<Path> gates =
                        dir.newDirectoryStream(Path.of(".gates"), LinkOption.NOFOLLOW_LINKS)) {
                    deleteRegular(gates, name);
                }
            } else if (scheme.equals("dir") && attributes(dir, name).isDirectory()) {
                deleteIn(dir, name);
            }
        } catch (IOException | RuntimeException e) {
            // left behind
        }
    }

    private static void deleteRegular(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        if (attributes(dir, name).isRegularFile()) {
            dir.deleteFile(name);
        }
    }

    private static BasicFileAttributes attributes(SecureDirectoryStream<Path> dir, Path name) throws IOException {
        return dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .readAttributes();
    }

    /** Copies the regular files and directories of {@code from} into {@code to} (links are not followed, nor copied). */
    static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Files.createDirectories(to.resolve(from.relativize(dir).toString()));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                if (attrs.isRegularFile()) {
                    Files.copy(
                            file,
                            to.resolve(from.relativize(file).toString()),
                            StandardCopyOption.REPLACE_EXISTING,
                            LinkOption.NOFOLLOW_LINKS);
                }
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /**
     * Makes the directory {@code dir} with the permissions of its parent (so that whoever may use
     * the lock space may take part in a run there; never writable by others), or accepts an existing one that is a real
     * directory, not a symbolic link.
     *
     * @throws FileAlreadyExistsException if {@code exclusive} and it exists
     */
    static void createLikeParent(Path dir, boolean exclusive) throws IOException {
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            if (exclusive) {
                throw e;
            }
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        dir + " is not a directory (a symbolic link, or a file): remove it;"
                                + " verify keeps its runs there and follows no link");
            }
            return;
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir.getParent());
        perms.remove(PosixFilePermission.OTHERS_WRITE); // a world-writable parent (/tmp): not others' to change
        Files.setPosixFilePermissions(dir, perms);
    }

    static boolean isEmptyDirectory(Path p) {
        if (!Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        try (var s = Files.list(p)) {
            return s.findAny().isEmpty();
        } catch (IOException e) {
            return false;
        }
    }

    /** The --keep directory (0700), made if absent, its parents too. */
    static Path createKeep(Path keep) {
        Path k = keep.toAbsolutePath();
        try {
            if (!Files.isDirectory(k, LinkOption.NOFOLLOW_LINKS)) {
                Files.createDirectories(k.getParent());
                Files.createDirectory(
                        k, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            return k;
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "cannot create --keep " + keep + ": " + VerifyWorker.reason(e), e);
        }
    }

    /** A private (0700) directory for the counter and the records, removed at the end. */
    static Path createTemporary() {
        try {
            return Files.createTempDirectory(
                    "interlock-verify-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.UNAVAILABLE,
                    "cannot create a temporary directory in " + System.getProperty("java.io.tmpdir") + ": "
                            + VerifyWorker.reason(e)
                            + "; set TMPDIR-like -Djava.io.tmpdir through INTERLOCK_JAVA_OPTS, or use --keep DIR",
                    e);
        }
    }
}
