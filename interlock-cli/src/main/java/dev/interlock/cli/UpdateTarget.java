package dev.interlock.cli;

import static dev.interlock.file.internal.LibcFiles.S_IFBLK;
import static dev.interlock.file.internal.LibcFiles.S_IFCHR;
import static dev.interlock.file.internal.LibcFiles.S_IFDIR;
import static dev.interlock.file.internal.LibcFiles.S_IFIFO;
import static dev.interlock.file.internal.LibcFiles.S_IFLNK;
import static dev.interlock.file.internal.LibcFiles.S_IFMT;
import static dev.interlock.file.internal.LibcFiles.S_IFREG;
import static dev.interlock.file.internal.LibcFiles.S_IFSOCK;

import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * FILE of {@code interlock update}, reached only through one open descriptor of its directory.
 *
 * <p>Whoever can write FILE's directory (another user, when root updates a file in a shared
 * directory) can rename, remove and plant names there at any moment. So the directory is opened
 * once, as the kernel resolves the path the user typed (symbolic links in the parent path are the
 * user's choice), and everything after that is relative to that descriptor and never follows a
 * link: the content is opened with {@code O_NOFOLLOW} and checked to be a regular file through
 * its own descriptor; the temporary file is created with {@code O_EXCL} (a planted name makes
 * the creation fail, it is never opened) and given FILE's owner and mode through its descriptor;
 * COMMAND gets both descriptors rather than names; the commit is one {@code renameat} of an exact
 * name, which never follows links either. Nothing is reopened by name.
 *
 * <p>The lock and {@code INTERLOCK_FILE} name FILE by its directory's real path, read from the
 * open descriptor ({@code /proc/self/fd}), so every path that reaches one file (through a
 * symlinked directory, or {@code a/link/../f}, which the kernel resolves differently from a
 * string clean-up) names the same lock.
 *
 * <p>Temporary files are named {@code .interlock-<16 hex of SHA-256(FILE's name)>.<16 random hex>.tmp}:
 * short enough beside a 255-byte name, and recognisable as FILE's. A writer creates one only while
 * it holds FILE's lock, so the next holder removes those an interrupted writer left behind.
 */
final class UpdateTarget implements AutoCloseable {
    static final String TEMP_PREFIX = ".interlock-";
    static final String TEMP_SUFFIX = ".tmp";
    private static final int HASH_HEX = 16;
    private static final int RANDOM_HEX = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Object fdLock = new Object();
    private int dirfd; // guarded by fdLock once COMMAND runs (the shutdown hook uses it)
    private final byte[] dirPath;
    private final byte[] name;
    private final byte[] cname;
    private final byte[] tempStem;

    /** What statx(2) says about a file: type and permission bits, owner, group, identity. */
    record Stat(int mode, int uid, int gid, long devMajor, long devMinor, long ino) {
        static Stat of(LibcFiles.Statx st) {
            return new Stat(st.mode(), st.uid(), st.gid(), st.devMajor(), st.devMinor(), st.ino());
        }

        int type() {
            return mode & S_IFMT;
        }

        boolean isRegular() {
            return type() == S_IFREG;
        }

        boolean sameFile(Stat o) {
            return o != null && o.ino == ino && o.devMajor == devMajor && o.devMinor == devMinor;
        }
    }

    /** An open file: its descriptor and what fstat said of it. */
    record Opened(int fd, Stat stat) {}

    /** The temporary file: its name in FILE's directory, its descriptor and identity. */
    record Temp(byte[] name, int fd, Stat stat) {
        String shown() {
            return text(name);
        }
    }

    private UpdateTarget(int dirfd, byte[] dirPath, byte[] name) {
        this.dirfd = dirfd;
        this.dirPath = dirPath;
        this.name = name;
        this.cname = LibcFiles.cstring(name);
        this.tempStem = (TEMP_PREFIX + HexFormat.of().formatHex(sha256(name), 0, HASH_HEX / 2) + ".")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Opens the directory of {@code file} (the path as the user typed it, raw bytes) the way the
     * kernel resolves it.
     *
     * @throws CliException 64 if FILE cannot name a file or its directory is missing, 73 if the directory cannot be opened
     */
    static UpdateTarget open(byte[] file) {
        String shown = text(file);
        if (file.length == 0) {
            throw new CliException(ExitCodes.USAGE, "FILE is empty: name the file to replace");
        }
        if (file[file.length - 1] == '/') {
            throw new CliException(ExitCodes.USAGE, "FILE " + shown + " ends with '/'; update replaces a file: name the file, without the '/'");
        }
        int slash = lastIndexOf(file, (byte) '/');
        byte[] parent = slash < 0 ? new byte[] {'.'} : slash == 0 ? new byte[] {'/'} : Arrays.copyOfRange(file, 0, slash);
        byte[] last = Arrays.copyOfRange(file, slash + 1, file.length);
        if (Arrays.equals(last, new byte[] {'.'}) || Arrays.equals(last, new byte[] {'.', '.'})) {
            throw new CliException(ExitCodes.USAGE, "FILE " + shown + " is a directory; update replaces a file: name a file in it");
        }
        int fd = LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.cstring(parent), LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC, 0);
        if (fd < 0) {
            int errno = Errno.last();
            String dir = text(parent);
            if (errno == Errno.ENOENT) {
                throw new CliException(ExitCodes.USAGE, "the directory of FILE, " + dir + ", does not exist; create it first");
            }
            if (errno == Errno.ENOTDIR) {
                throw new CliException(ExitCodes.USAGE, "the directory of FILE, " + dir + ", is not a directory (or a path to it goes through a file)");
            }
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot open the directory of FILE, " + dir + ": " + Errno.describe(errno)
                    + "; FILE is unchanged");
        }
        try {
            fd = aboveStdio(fd);
            return new UpdateTarget(fd, realPath(fd, parent), last);
        } catch (RuntimeException e) {
            LibcFiles.close(fd);
            throw e;
        }
    }

    /** The real path of FILE: its directory's real path, '/', its name. For messages, the lock name and INTERLOCK_FILE. */
    String path() {
        return text(pathBytes());
    }

    byte[] pathBytes() {
        boolean root = dirPath.length == 1 && dirPath[0] == '/';
        byte[] out = new byte[dirPath.length + (root ? 0 : 1) + name.length];
        System.arraycopy(dirPath, 0, out, 0, dirPath.length);
        int at = dirPath.length;
        if (!root) {
            out[at++] = '/';
        }
        System.arraycopy(name, 0, out, at, name.length);
        return out;
    }

    String directory() {
        return text(dirPath);
    }

    /**
     * Refuses a FILE that update cannot replace: anything but a regular file or nothing. Called
     * before the lock is taken, so that such a FILE is an error at once rather than after a wait.
     */
    void check() {
        Stat st = lstat(cname, path());
        if (st != null) {
            refuseUnlessRegular(st);
        }
    }

    /**
     * Opens FILE's current content for COMMAND's stdin, or returns null if FILE does not exist.
     * The open never follows a link, never blocks (a FIFO planted after the check) and never makes
     * a terminal ours; what it opened is checked again through the descriptor.
     *
     * @throws CliException 64 if FILE is not a regular file, 73 if it cannot be read
     */
    Opened openContent() {
        Stat st = lstat(cname, path());
        if (st == null) {
            return null;
        }
        refuseUnlessRegular(st);
        int fd = LibcFiles.openat(dirfd, cname, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_NONBLOCK | LibcFiles.O_NOCTTY | LibcFiles.O_CLOEXEC, 0);
        if (fd < 0) {
            int errno = Errno.last();
            if (errno == Errno.ENOENT) {
                return null; // removed a moment ago by someone not using the lock: as if absent
            }
            if (errno == Errno.ELOOP || errno == Errno.ENXIO) {
                Stat now = lstat(cname, path()); // replaced by a link or a socket since the check
                if (now != null) {
                    refuseUnlessRegular(now);
                }
            }
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot read " + path() + ": " + Errno.describe(errno) + "; it is unchanged");
        }
        try {
            fd = aboveStdio(fd);
            Stat opened = fstat(fd, path());
            refuseUnlessRegular(opened);
            int flags = LibcFiles.fcntl(fd, LibcFiles.F_GETFL, 0);
            if (flags >= 0) {
                LibcFiles.fcntl(fd, LibcFiles.F_SETFL, flags & ~LibcFiles.O_NONBLOCK); // COMMAND gets an ordinary stdin
            }
            return new Opened(fd, opened);
        } catch (RuntimeException e) {
            LibcFiles.close(fd);
            throw e;
        }
    }

    /**
     * Removes the temporary files of this FILE that interrupted writers left behind. Only exact
     * names of the pattern with FILE's hash, only regular files, with {@code unlinkat} (which never
     * follows a link). The caller holds FILE's lock, so no live writer of FILE owns one.
     *
     * @return the names removed, and the failures as messages
     */
    List<String> removeLeftovers() {
        List<String> notes = new ArrayList<>();
        List<byte[]> candidates = new ArrayList<>();
        List<LibcFiles.DirEntry> entries = LibcFiles.readDirectory(dirfd);
        if (entries == null) {
            notes.add("warning: cannot list " + directory() + " for leftover temporary files: " + Errno.describeLast());
            return notes;
        }
        for (LibcFiles.DirEntry e : entries) {
            if (isOurTemp(e.name())) {
                candidates.add(e.name());
            }
        }
        for (byte[] entry : candidates) {
            byte[] c = LibcFiles.cstring(entry);
            Stat st = lstat(c, text(entry));
            if (st == null || !st.isRegular()) {
                continue; // not something we made: a link or directory is left alone
            }
            if (LibcFiles.unlinkat(dirfd, c, 0) == 0) {
                notes.add("removed " + text(entry) + " in " + directory() + ", left by an update of "
                        + text(name) + " that was interrupted");
            } else if (Errno.last() != Errno.ENOENT) {
                notes.add("warning: cannot remove " + text(entry) + " in " + directory() + ": " + Errno.describeLast());
            }
        }
        return notes;
    }

    /** True for exactly {@code .interlock-<FILE's hash>.<16 lowercase hex>.tmp}. */
    boolean isOurTemp(byte[] entry) {
        if (entry.length != tempStem.length + RANDOM_HEX + TEMP_SUFFIX.length()
                || !Arrays.equals(entry, 0, tempStem.length, tempStem, 0, tempStem.length)) {
            return false;
        }
        for (int i = tempStem.length; i < tempStem.length + RANDOM_HEX; i++) {
            byte b = entry[i];
            if (!((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f'))) {
                return false;
            }
        }
        byte[] suffix = TEMP_SUFFIX.getBytes(StandardCharsets.US_ASCII);
        return Arrays.equals(entry, entry.length - suffix.length, entry.length, suffix, 0, suffix.length);
    }

    /**
     * Creates the temporary file (mode 0600 while it is ours alone), then gives it, through its
     * descriptor, FILE's owner and group and then FILE's mode (in that order: chown clears the
     * set-user-ID bit), or for a new FILE mode 0666 less the umask.
     *
     * @param like FILE as it is, or null if it does not exist
     * @throws CliException 73 if it cannot be created, or cannot get FILE's owner and group
     */
    Temp createTemp(Stat like) {
        byte[] tmpName = null;
        int fd = -1;
        for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
            byte[] random = new byte[RANDOM_HEX / 2];
            RANDOM.nextBytes(random);
            tmpName = concat(tempStem, (HexFormat.of().formatHex(random) + TEMP_SUFFIX).getBytes(StandardCharsets.US_ASCII));
            fd = LibcFiles.openat(dirfd, LibcFiles.cstring(tmpName),
                    LibcFiles.O_WRONLY | LibcFiles.O_CREAT | LibcFiles.O_EXCL | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC, 0600);
            if (fd < 0 && Errno.last() != Errno.EEXIST) {
                throw new CliException(UpdateCommand.CANT_CREATE, "cannot create a temporary file in " + directory() + ": "
                        + Errno.describeLast() + "; " + path() + " is unchanged");
            }
        }
        if (fd < 0) {
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot create a temporary file in " + directory()
                    + ": every name tried exists; " + path() + " is unchanged");
        }
        Temp made = null;
        try {
            fd = aboveStdio(fd);
            made = new Temp(tmpName, fd, fstat(fd, text(tmpName)));
            if (like != null) {
                if (LibcFiles.fchown(fd, like.uid(), like.gid()) != 0) {
                    int errno = Errno.last();
                    if (errno == Errno.EPERM) {
                        throw new CliException(UpdateCommand.CANT_CREATE, path() + " belongs to " + Ids.user(like.uid()) + " and group "
                                + Ids.group(like.gid()) + "; running as " + Ids.user(Ids.effectiveUid())
                                + ", update cannot give the new content that owner and group, and will not change"
                                + " them: run it as the file's owner (in its group) or as root. " + path() + " is unchanged");
                    }
                    throw new CliException(UpdateCommand.CANT_CREATE, "cannot give the temporary file " + text(tmpName) + " the owner of "
                            + path() + ": " + Errno.describe(errno) + "; it is unchanged");
                }
                chmod(fd, like.mode() & 07777, tmpName);
            } else {
                chmod(fd, 0666 & ~Ids.umask(), tmpName);
            }
            return made;
        } catch (RuntimeException e) {
            if (made != null) {
                removeTemp(made);
            } else {
                LibcFiles.unlinkat(dirfd, LibcFiles.cstring(tmpName), 0);
            }
            LibcFiles.close(fd);
            throw e;
        }
    }

    private void chmod(int fd, int mode, byte[] tmpName) {
        if (LibcFiles.fchmod(fd, mode) != 0) {
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot set the mode of the temporary file " + text(tmpName) + " to "
                    + String.format("%04o", mode) + ": " + Errno.describeLast() + "; " + path() + " is unchanged");
        }
    }

    /**
     * Flushes the temporary file and renames it over FILE, then flushes the directory. Before the
     * rename, checks that the temporary name still holds our file: if someone who can write the
     * directory removed or replaced it, FILE is left as it is.
     *
     * @return true if FILE now is the file COMMAND wrote; false if FILE's name was changed again right after the rename
     * @throws CliException 73 if the file cannot be flushed or renamed, or the temporary name no longer holds it
     */
    boolean commit(Temp t) {
        if (LibcFiles.fsync(t.fd()) != 0) {
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot flush the temporary file " + t.shown() + " to disk: "
                    + Errno.describeLast() + "; " + path() + " is unchanged");
        }
        byte[] ctmp = LibcFiles.cstring(t.name());
        Stat there = lstat(ctmp, t.shown());
        if (!t.stat().sameFile(there)) {
            throw new CliException(UpdateCommand.CANT_CREATE, "the temporary file " + t.shown() + " in " + directory()
                    + " was removed or replaced while COMMAND ran (by someone else who can write that directory, or by an"
                    + " update of the same file under another lock name); " + path() + " is unchanged");
        }
        if (LibcFiles.renameat(dirfd, ctmp, dirfd, cname) != 0) {
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot rename " + t.shown() + " over " + path() + ": "
                    + Errno.describeLast() + "; it is unchanged");
        }
        LibcFiles.fsync(dirfd); // some file systems cannot flush a directory (EINVAL); the rename is done either way
        return t.stat().sameFile(lstat(cname, path()));
    }

    /** Removes the temporary file if its name still holds it (never what someone put there instead). */
    boolean removeTemp(Temp t) {
        synchronized (fdLock) {
            if (dirfd < 0) {
                return false;
            }
            byte[] ctmp = LibcFiles.cstring(t.name());
            Stat there = lstatOrNull(ctmp);
            return t.stat().sameFile(there) && LibcFiles.unlinkat(dirfd, ctmp, 0) == 0;
        }
    }

    @Override
    public void close() {
        synchronized (fdLock) {
            if (dirfd >= 0) {
                LibcFiles.close(dirfd);
                dirfd = -1;
            }
        }
    }

    private Stat lstat(byte[] cpath, String shown) {
        LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, cpath);
        if (st == null) {
            int errno = Errno.last();
            if (errno == Errno.ENOENT) {
                return null;
            }
            if (errno == Errno.ENAMETOOLONG) {
                throw new CliException(ExitCodes.USAGE, "FILE " + shown + ": the name is too long for the file system");
            }
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot look at " + shown + ": " + Errno.describe(errno));
        }
        return Stat.of(st);
    }

    private Stat lstatOrNull(byte[] cpath) {
        LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, cpath);
        return st == null ? null : Stat.of(st);
    }

    private static Stat fstat(int fd, String shown) {
        LibcFiles.Statx st = LibcFiles.fstat(fd);
        if (st == null) {
            throw new CliException(UpdateCommand.CANT_CREATE, "cannot look at " + shown + ": " + Errno.describeLast());
        }
        return Stat.of(st);
    }

    private void refuseUnlessRegular(Stat st) {
        switch (st.type()) {
            case S_IFREG:
                return;
            case S_IFDIR:
                throw new CliException(ExitCodes.USAGE, "FILE " + path() + " is a directory; update replaces a file: name a file in it");
            case S_IFLNK:
                throw symlink();
            default:
                throw new CliException(ExitCodes.USAGE, "FILE " + path() + " is " + typeName(st.type())
                        + ", not a regular file; update only replaces regular files (it would read COMMAND's input from it and"
                        + " put a regular file in its place): name a regular file");
        }
    }

    /**
     * A link as FILE is refused rather than followed: whoever can write FILE's directory could point
     * it elsewhere between our look and our write. The message says where it points so the user
     * can pass that path, whose own directory is then opened as the kernel resolves it.
     */
    private CliException symlink() {
        byte[] buf = new byte[4096];
        long n = LibcFiles.readlinkat(dirfd, cname, buf, buf.length);
        if (n < 0) {
            return new CliException(ExitCodes.USAGE, "FILE " + path() + " is a symbolic link; update does not follow links"
                    + " (whoever can write " + directory() + " could redirect it): pass the path of the file it points to");
        }
        byte[] target = Arrays.copyOf(buf, (int) n);
        byte[] full = target.length > 0 && target[0] == '/' ? target
                : concat(concat(dirPath, dirPath.length == 1 && dirPath[0] == '/' ? new byte[0] : new byte[] {'/'}), target);
        return new CliException(ExitCodes.USAGE, "FILE " + path() + " is a symbolic link to " + text(target)
                + "; update does not follow links (whoever can write " + directory() + " could point it elsewhere between"
                + " the check and the write): pass the path it points to, " + text(full));
    }

    private static String typeName(int type) {
        switch (type) {
            case S_IFIFO:
                return "a FIFO (named pipe)";
            case S_IFCHR:
                return "a character device";
            case S_IFBLK:
                return "a block device";
            case S_IFSOCK:
                return "a socket";
            default:
                return String.format("of an unknown type (mode %06o)", type);
        }
    }

    /** The directory's real path, read from its descriptor: what the kernel resolved, links and '..' included. */
    private static byte[] realPath(int fd, byte[] typed) {
        byte[] buf = new byte[4096];
        byte[] proc = LibcFiles.cstring(("/proc/self/fd/" + fd).getBytes(StandardCharsets.US_ASCII));
        long n = LibcFiles.readlinkat(LibcFiles.AT_FDCWD, proc, buf, buf.length);
        if (n <= 0 || buf[0] != '/') {
            throw new CliException(ExitCodes.OSERR, "cannot read the real path of " + text(typed) + " from /proc/self/fd"
                    + (n < 0 ? ": " + Errno.describeLast() : "") + "; update needs /proc mounted");
        }
        return Arrays.copyOf(buf, (int) n);
    }

    /** Moves a descriptor to 3 or above, so that giving COMMAND its stdin and stdout cannot overwrite another. */
    private static int aboveStdio(int fd) {
        if (fd > 2) {
            return fd;
        }
        int moved = LibcFiles.fcntl(fd, LibcFiles.F_DUPFD_CLOEXEC, 3);
        int errno = Errno.last();
        LibcFiles.close(fd);
        if (moved < 0) {
            throw new CliException(ExitCodes.OSERR, "cannot duplicate a descriptor: " + Errno.describe(errno));
        }
        return moved;
    }

    /** Bytes as text for messages and lock names: UTF-8, whatever the locale (like lock names on the command line). */
    static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private static int lastIndexOf(byte[] a, byte b) {
        for (int i = a.length - 1; i >= 0; i--) {
            if (a[i] == b) {
                return i;
            }
        }
        return -1;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java has SHA-256", e);
        }
    }

    /** User and group names for messages, and the process's umask and effective uid, from /proc and /etc. */
    static final class Ids {
        private Ids() {}

        static String user(int uid) {
            return describe(uid, Path.of("/etc/passwd"));
        }

        static String group(int gid) {
            return describe(gid, Path.of("/etc/group"));
        }

        private static String describe(int id, Path db) {
            long unsigned = id & 0xffffffffL;
            try {
                for (String line : Files.readAllLines(db, StandardCharsets.UTF_8)) {
                    String[] f = line.split(":", -1);
                    if (f.length > 2 && f[2].equals(Long.toString(unsigned))) {
                        return f[0] + " (" + unsigned + ")";
                    }
                }
            } catch (IOException | RuntimeException e) {
                // a number is enough
            }
            return Long.toString(unsigned);
        }

        /** The umask, from /proc/self/status (reading it with umask(2) would change it for a moment for every thread). */
        static int umask() {
            String v = status("Umask:");
            try {
                return v == null ? 022 : Integer.parseInt(v.trim(), 8);
            } catch (NumberFormatException e) {
                return 022;
            }
        }

        static int effectiveUid() {
            String v = status("Uid:");
            try {
                return v == null ? -1 : Integer.parseInt(v.trim().split("\\s+")[1]);
            } catch (RuntimeException e) {
                return -1;
            }
        }

        private static String status(String key) {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
                    if (line.startsWith(key)) {
                        return line.substring(key.length());
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux
            }
            return null;
        }
    }
}
