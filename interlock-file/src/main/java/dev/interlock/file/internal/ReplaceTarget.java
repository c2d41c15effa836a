package dev.interlock.file.internal;

import static dev.interlock.file.internal.LibcFiles.S_IFMT;
import static dev.interlock.file.internal.LibcFiles.S_IFREG;

import dev.interlock.Lease;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import dev.interlock.file.FencedWriteException;
import dev.interlock.spi.support.Log;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Consumer;

/**
 * Internal API of Interlock (not for applications; use {@link dev.interlock.file.AtomicFile}): a
 * file to be replaced atomically, reached only through one open descriptor of its directory. It
 * is the one implementation behind {@code AtomicFile} and {@code interlock update}, which needs
 * the descriptors themselves (COMMAND reads the old content from one and writes the new into the other).
 *
 * <p>Whoever can write the file's directory (another user, when root updates a file in a shared
 * directory) can rename, remove and plant names there at any moment. So the directory is opened
 * once, as the kernel resolves the path given (symbolic links in the parent path are the
 * caller's choice), and everything after that is relative to that descriptor and never follows a
 * link: the content is opened with {@code O_NOFOLLOW} and checked to be a regular file through
 * its own descriptor; the temporary file is created with {@code O_EXCL} (a planted name makes
 * the creation fail, it is never opened) and given the file's owner and mode through its
 * descriptor; the commit is one {@code renameat} of an exact name, which never follows links
 * either. Nothing is reopened by name.
 *
 * <p>Names are shown by the directory's real path, read from the open descriptor
 * ({@code /proc/self/fd}), so every path that reaches one file (through a symlinked directory, or
 * {@code a/link/../f}, which the kernel resolves differently from a string clean-up) shows, and
 * locks, the same name.
 *
 * <p><b>Temporary files</b> are named {@code .interlock-<16 hex of SHA-256(file name)>.<16 random hex>.tmp}:
 * short enough beside a 255-byte name, and recognisable as this file's. Their writer holds a
 * {@code flock(2)} on each for as long as it lives (the kernel drops it when the process dies,
 * {@code kill -9} included), taken while it holds the directory's gate shared, so a temporary
 * file whose flock another writer can take while holding the gate exclusively is provably a dead
 * writer's leftover: {@link #removeLeftovers} removes exactly those, and nothing else.
 *
 * <p><b>The gate</b> is a {@code flock(2)} on the directory itself (this object's own open file
 * description). The commit holds it exclusively while it reads the file's fencing token, compares,
 * checks the lease and renames, so two fenced writers (one of them a stale holder, who by
 * definition no longer holds the lock) cannot both pass the check; see {@code docs/fencing.md}.
 * Where it cannot be taken (NFS, unless mounted {@code local_lock=flock}), a fenced write needs
 * a lease: the lease it is made under keeps two writers from committing at once, and the newer one's commit
 * withdraws the older one's temporary file, so the older one's rename cannot land after it.
 * Anyone who can read the directory can flock it too, so the gate is waited for only so long,
 * saying who holds it ({@link DirectoryGate}).
 */
public final class ReplaceTarget implements AutoCloseable {
    public static final String TEMP_PREFIX = ".interlock-";
    public static final String TEMP_SUFFIX = ".tmp";
    /** The extended attribute that carries a file's fencing token (docs/fencing.md). */
    public static final String FENCE_ATTRIBUTE = FenceAttribute.NAME;

    private static final int HASH_HEX = 16;
    private static final Log LOG = Log.of(ReplaceTarget.class);

    final Object fdLock = new Object();
    int dirfd; // guarded by fdLock once COMMAND runs (the shutdown hook uses it)
    final byte[] dirPath;
    final byte[] name;
    final byte[] cname;
    /** The start of this file's temporary files' names: {@code .interlock-<hash>.}. */
    final byte[] tempStem;
    /** This file's temporary files (one job), and its fencing attribute (another). */
    final TempFiles temps = new TempFiles(this);

    final FenceAttribute fences = new FenceAttribute(this);
    /** The checks under the gate and the rename that publish the new content. */
    private final ReplaceCommit commits = new ReplaceCommit(this);
    /** False only for {@link #openWithoutGate}: a file system where flock(2) on a directory fails. */
    private final boolean gateAvailable;

    private volatile Consumer<String> gateNotice = m -> LOG.warn("{}", m);

    /** What statx(2) says about a file: type and permission bits, owner, group, identity. */
    public record Stat(int mode, int uid, int gid, long devMajor, long devMinor, long ino) {
        static Stat of(LibcFiles.Statx st) {
            return new Stat(st.mode(), st.uid(), st.gid(), st.devMajor(), st.devMinor(), st.ino());
        }

        public int type() {
            return mode & S_IFMT;
        }

        public boolean isRegular() {
            return type() == S_IFREG;
        }

        public boolean sameFile(Stat o) {
            return o != null && o.ino == ino && o.devMajor == devMajor && o.devMinor == devMinor;
        }
    }

    /** An open file: its descriptor and what fstat said of it. */
    public record Opened(int fd, Stat stat) {}

    /** The temporary file: its name in the file's directory, its descriptor (flocked while it lives) and identity. */
    public record Temp(byte[] name, int fd, Stat stat) {
        public String shown() {
            return text(name);
        }
    }

    private ReplaceTarget(int dirfd, byte[] dirPath, byte[] name, boolean gateAvailable) {
        this.gateAvailable = gateAvailable;
        this.dirfd = dirfd;
        this.dirPath = dirPath;
        this.name = name;
        this.cname = LibcFiles.cstring(name);
        this.tempStem = (TEMP_PREFIX + HexFormat.of().formatHex(sha256(name), 0, HASH_HEX / 2) + ".")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Opens the directory of {@code file} (a path, raw bytes) the way the kernel resolves it.
     *
     * @throws AtomicFileException {@link Reason#BAD_PATH} if the path cannot name a file or its directory is
     *     missing, {@link Reason#IO} if the directory cannot be opened
     */
    public static ReplaceTarget open(byte[] file) throws AtomicFileException {
        return open(file, true);
    }

    /**
     * For tests: {@link #open(Path)} on a file system that grants no flock(2) on a directory, as
     * an NFS mount without {@code local_lock=flock} (no such file system is at hand in tests).
     */
    static ReplaceTarget openWithoutGate(Path file) throws AtomicFileException {
        return open(file.toString().getBytes(Libc.PATH_CHARSET), false);
    }

    private static ReplaceTarget open(byte[] file, boolean gateAvailable) throws AtomicFileException {
        String shown = text(file);
        if (file.length == 0) {
            throw new AtomicFileException(Reason.BAD_PATH, "the file name is empty: name the file to replace");
        }
        if (file[file.length - 1] == '/') {
            throw new AtomicFileException(
                    Reason.BAD_PATH,
                    shown + " ends with '/'; only a file can be replaced: name the file, without the '/'");
        }
        int slash = lastIndexOf(file, (byte) '/');
        byte[] parent =
                slash < 0 ? new byte[] {'.'} : slash == 0 ? new byte[] {'/'} : Arrays.copyOfRange(file, 0, slash);
        byte[] last = Arrays.copyOfRange(file, slash + 1, file.length);
        if (Arrays.equals(last, new byte[] {'.'}) || Arrays.equals(last, new byte[] {'.', '.'})) {
            throw new AtomicFileException(
                    Reason.BAD_PATH, shown + " is a directory; only a file can be replaced: name a file in it");
        }
        int fd;
        try {
            fd = NativeFiles.openat(
                    LibcFiles.AT_FDCWD,
                    LibcFiles.cstring(parent),
                    LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC,
                    0);
        } catch (ErrnoException e) {
            int errno = e.errno();
            String dir = text(parent);
            if (errno == Errno.ENOENT) {
                throw new AtomicFileException(
                        Reason.BAD_PATH,
                        "the directory of " + shown + ", " + dir + ", does not exist; create it first");
            }
            if (errno == Errno.ENOTDIR) {
                throw new AtomicFileException(
                        Reason.BAD_PATH,
                        "the directory of " + shown + ", " + dir
                                + ", is not a directory (or a path to it goes through a file)");
            }
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot open the directory of " + shown + ", " + dir + ": " + Errno.describe(errno) + "; " + shown
                            + " is unchanged");
        }
        try {
            fd = aboveStdio(fd);
            return new ReplaceTarget(fd, realPath(fd, parent), last, gateAvailable);
        } catch (AtomicFileException | RuntimeException e) {
            LibcFiles.close(fd);
            throw e;
        }
    }

    /** {@link #open(byte[])} of a path, encoded as the JVM encodes file names. */
    public static ReplaceTarget open(Path file) throws AtomicFileException {
        return open(file.toString().getBytes(Libc.PATH_CHARSET));
    }

    /** Where a wait for the directory's gate is reported (once, after a second); a warning in the log by default. */
    public void onGateWait(Consumer<String> notice) {
        this.gateNotice = notice;
    }

    /** The real path of the file: its directory's real path, '/', its name. For messages, lock names and INTERLOCK_FILE. */
    public String path() {
        return text(pathBytes());
    }

    public byte[] pathBytes() {
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

    public String directory() {
        return text(dirPath);
    }

    /**
     * Refuses a file that cannot be replaced: anything but a regular file or nothing. The command
     * line calls it before taking the lock, so that such a file is an error at once rather than after a wait.
     */
    public void check() throws AtomicFileException {
        Stat st = lstat(cname, path());
        if (st != null) {
            NotRegularFile.refuse(this, st);
        }
    }

    /**
     * Opens the file's current content, or returns null if it does not exist. The open never
     * follows a link, never blocks (a FIFO planted after the check) and never makes a terminal
     * ours; what it opened is checked again through the descriptor.
     *
     * @throws AtomicFileException {@link Reason#BAD_PATH} if it is not a regular file, {@link Reason#IO} if it cannot be read
     */
    public Opened openContent() throws AtomicFileException {
        Stat st = lstat(cname, path());
        if (st == null) {
            return null;
        }
        NotRegularFile.refuse(this, st);
        int fd;
        try {
            fd = NativeFiles.openat(dirfd, cname, LibcFiles.O_READ_NO_FOLLOW, 0);
        } catch (ErrnoException e) {
            int errno = e.errno();
            if (errno == Errno.ENOENT) {
                return null; // removed a moment ago by someone not using the lock: as if absent
            }
            if (errno == Errno.ELOOP || errno == Errno.ENXIO) {
                Stat now = lstat(cname, path()); // replaced by a link or a socket since the check
                if (now != null) {
                    NotRegularFile.refuse(this, now);
                }
            }
            throw new AtomicFileException(
                    Reason.IO, "cannot read " + path() + ": " + Errno.describe(errno) + "; it is unchanged");
        }
        try {
            fd = aboveStdio(fd);
            Stat opened = fstat(fd, path());
            NotRegularFile.refuse(this, opened);
            int flags = LibcFiles.fcntl(fd, LibcFiles.F_GETFL, 0);
            if (flags >= 0) {
                LibcFiles.fcntl(
                        fd,
                        LibcFiles.F_SETFL,
                        flags & ~LibcFiles.O_NONBLOCK); // an ordinary descriptor to read (COMMAND's stdin)
            }
            return new Opened(fd, opened);
        } catch (AtomicFileException | RuntimeException e) {
            LibcFiles.close(fd);
            throw e;
        }
    }

    /** All the bytes of an open file, from its start. */
    public byte[] readAll(Opened content) throws AtomicFileException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        long at = 0;
        while (true) {
            long n;
            try {
                n = NativeFiles.pread(content.fd(), buf, buf.length, at);
            } catch (ErrnoException e) {
                if (e.errno() == Errno.EINTR) {
                    continue;
                }
                throw new AtomicFileException(
                        Reason.IO, "cannot read " + path() + ": " + e.getMessage() + "; it is unchanged");
            }
            if (n == 0) {
                return out.toByteArray();
            }
            out.write(buf, 0, (int) n);
            at += n;
        }
    }

    /**
     * Removes the temporary files of this file left by writers that died (kill -9, a crash): those
     * whose flock can be taken while holding the directory's gate exclusively ({@link TempFiles}).
     *
     * @return the names removed, and the failures as messages
     * @throws AtomicFileException {@link Reason#IO} if someone else holds the gate too long
     */
    public List<String> removeLeftovers() throws AtomicFileException {
        return temps.removeLeftovers();
    }

    /** True for exactly {@code .interlock-<the file's hash>.<16 lowercase hex>.tmp}. */
    public boolean isOurTemp(byte[] entry) {
        return temps.isOurs(entry);
    }

    /**
     * Creates the temporary file, flocked while this process lives, with the owner, group and
     * mode of {@code like} (or, for a new file, mode 0666 less the umask); see {@link TempFiles#create}.
     *
     * @param like the file as it is, or null if it does not exist
     * @throws AtomicFileException {@link Reason#IO} if it cannot be created, or cannot get the file's owner and group
     */
    public Temp createTemp(Stat like) throws AtomicFileException {
        return temps.create(like);
    }

    /**
     * Writes all of {@code content} to the temporary file.
     *
     * @throws AtomicFileException {@link Reason#IO} if a write fails (ENOSPC, EDQUOT, EIO...)
     */
    public void write(Temp t, byte[] content) throws AtomicFileException {
        temps.write(t, content);
    }

    /** Removes the temporary file if its name still holds it (never what someone put there instead). */
    public boolean removeTemp(Temp t) {
        return temps.remove(t);
    }

    /**
     * Marks the temporary file with fencing token {@code token} (before the commit, which
     * publishes content and token together).
     *
     * @throws AtomicFileException {@link Reason#FENCE_UNSUPPORTED} if the file system keeps no user extended attributes
     */
    public void setFence(Temp t, long token) throws AtomicFileException {
        fences.set(t, token);
    }

    /**
     * The fencing token the file carries now, or empty if it carries none (or does not exist, or
     * its file system keeps no user extended attributes).
     *
     * @throws AtomicFileException {@link Reason#IO} if the attribute cannot be read or does not hold a token
     */
    public OptionalLong fence() throws AtomicFileException {
        return fences.ofFile();
    }

    /**
     * Flushes the temporary file and renames it over the file, then flushes the directory. Under
     * the exclusive gate, just before the rename: checks that the temporary name still holds our
     * file (if someone who can write the directory removed or replaced it, the file is left as it
     * is), compares the fencing token (a fenced write that would go backwards is refused; an
     * unfenced one inherits the file's token, so the fence never goes backwards), and checks the
     * lease, as late as it can be checked.
     *
     * @param token this write's fencing token, already set with {@link #setFence}, or -1 for an unfenced write
     * @param lease the lease the write is made under, checked valid just before the rename; null for none
     * @return true if the file now is the temporary file; false if its name was changed again right after the rename
     * @throws FencedWriteException if the file carries a larger token than {@code token}
     * @throws AtomicFileException {@link Reason#LEASE_NOT_VALID} if the lease is no longer valid,
     *     {@link Reason#FENCE_UNSUPPORTED} if a fenced write without a lease cannot take the gate, {@link Reason#IO} if the file
     *     cannot be flushed or renamed, or the temporary name no longer holds it
     */
    public boolean commit(Temp t, long token, Lease lease) throws AtomicFileException {
        return commits.commit(t, token, lease);
    }

    /**
     * Takes the gate (flock on the directory).
     *
     * @return null once held; if it cannot be taken here, why
     * @throws AtomicFileException {@link Reason#IO} if someone else holds it past the limit
     */
    String gate(int op) throws AtomicFileException {
        if (!gateAvailable) {
            return Errno.describe(Errno.ENOLCK); // what an NFS mount without flock says
        }
        return DirectoryGate.take(dirfd, op, directory(), path(), gateNotice);
    }

    void ungate() {
        LibcFiles.flock(dirfd, LibcFiles.LOCK_UN);
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

    Stat lstat(byte[] cpath, String shown) throws AtomicFileException {
        LibcFiles.Statx st;
        try {
            st = NativeFiles.statx(dirfd, cpath, LibcFiles.AT_SYMLINK_NOFOLLOW);
        } catch (ErrnoException e) {
            int errno = e.errno();
            if (errno == Errno.ENOENT) {
                return null;
            }
            if (errno == Errno.ENAMETOOLONG) {
                throw new AtomicFileException(Reason.BAD_PATH, shown + ": the name is too long for the file system");
            }
            throw new AtomicFileException(Reason.IO, "cannot look at " + shown + ": " + Errno.describe(errno));
        }
        return Stat.of(st);
    }

    Stat lstatOrNull(byte[] cpath) {
        LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, cpath);
        return st == null ? null : Stat.of(st);
    }

    static Stat fstat(int fd, String shown) throws AtomicFileException {
        try {
            return Stat.of(NativeFiles.fstat(fd));
        } catch (ErrnoException e) {
            throw new AtomicFileException(Reason.IO, "cannot look at " + shown + ": " + e.getMessage());
        }
    }

    /** The directory's real path, read from its descriptor: what the kernel resolved, links and '..' included. */
    private static byte[] realPath(int fd, byte[] typed) throws AtomicFileException {
        byte[] buf = new byte[4096];
        byte[] proc = LibcFiles.cstring(("/proc/self/fd/" + fd).getBytes(StandardCharsets.US_ASCII));
        long n;
        String why = "";
        try {
            n = NativeFiles.readlinkat(LibcFiles.AT_FDCWD, proc, buf);
        } catch (ErrnoException e) {
            n = -1;
            why = ": " + e.getMessage();
        }
        if (n <= 0 || buf[0] != '/') {
            throw new AtomicFileException(
                    Reason.SYSTEM,
                    "cannot read the real path of " + text(typed) + " from /proc/self/fd" + why
                            + "; Interlock needs /proc mounted");
        }
        return Arrays.copyOf(buf, (int) n);
    }

    /** Moves a descriptor to 3 or above, so that giving COMMAND its stdin and stdout cannot overwrite another. */
    static int aboveStdio(int fd) throws AtomicFileException {
        if (fd > 2) {
            return fd;
        }
        try {
            return NativeFiles.duplicateAtLeast(fd, 3);
        } catch (ErrnoException e) {
            throw new AtomicFileException(Reason.SYSTEM, "cannot duplicate a descriptor: " + e.getMessage());
        } finally {
            LibcFiles.close(fd);
        }
    }

    /** Bytes as text for messages and lock names: UTF-8, whatever the locale (like lock names on the command line). */
    public static String text(byte[] b) {
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

    static byte[] concat(byte[] a, byte[] b) {
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
}
