package dev.interlock.file.internal;

import static dev.interlock.file.internal.LibcFiles.S_IFBLK;
import static dev.interlock.file.internal.LibcFiles.S_IFCHR;
import static dev.interlock.file.internal.LibcFiles.S_IFDIR;
import static dev.interlock.file.internal.LibcFiles.S_IFIFO;
import static dev.interlock.file.internal.LibcFiles.S_IFLNK;
import static dev.interlock.file.internal.LibcFiles.S_IFMT;
import static dev.interlock.file.internal.LibcFiles.S_IFREG;
import static dev.interlock.file.internal.LibcFiles.S_IFSOCK;

import dev.interlock.Lease;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import dev.interlock.file.FencedWriteException;
import dev.interlock.spi.support.Log;
import java.io.ByteArrayOutputStream;
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
    public static final String FENCE_ATTRIBUTE = "user.interlock.fence";
    private static final byte[] FENCE_NAME = LibcFiles.cstring(FENCE_ATTRIBUTE.getBytes(StandardCharsets.US_ASCII));
    private static final int HASH_HEX = 16;
    private static final int RANDOM_HEX = 16;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Log LOG = Log.of(ReplaceTarget.class);

    private final Object fdLock = new Object();
    private int dirfd; // guarded by fdLock once COMMAND runs (the shutdown hook uses it)
    private final byte[] dirPath;
    private final byte[] name;
    private final byte[] cname;
    private final byte[] tempStem;
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
            throw new AtomicFileException(Reason.BAD_PATH, shown + " ends with '/'; only a file can be replaced: name the file, without the '/'");
        }
        int slash = lastIndexOf(file, (byte) '/');
        byte[] parent = slash < 0 ? new byte[] {'.'} : slash == 0 ? new byte[] {'/'} : Arrays.copyOfRange(file, 0, slash);
        byte[] last = Arrays.copyOfRange(file, slash + 1, file.length);
        if (Arrays.equals(last, new byte[] {'.'}) || Arrays.equals(last, new byte[] {'.', '.'})) {
            throw new AtomicFileException(Reason.BAD_PATH, shown + " is a directory; only a file can be replaced: name a file in it");
        }
        int fd = LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.cstring(parent), LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC, 0);
        if (fd < 0) {
            int errno = Errno.last();
            String dir = text(parent);
            if (errno == Errno.ENOENT) {
                throw new AtomicFileException(Reason.BAD_PATH, "the directory of " + shown + ", " + dir + ", does not exist; create it first");
            }
            if (errno == Errno.ENOTDIR) {
                throw new AtomicFileException(Reason.BAD_PATH, "the directory of " + shown + ", " + dir
                        + ", is not a directory (or a path to it goes through a file)");
            }
            throw new AtomicFileException(Reason.IO, "cannot open the directory of " + shown + ", " + dir + ": " + Errno.describe(errno)
                    + "; " + shown + " is unchanged");
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
            refuseUnlessRegular(st);
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
            throw new AtomicFileException(Reason.IO, "cannot read " + path() + ": " + Errno.describe(errno) + "; it is unchanged");
        }
        try {
            fd = aboveStdio(fd);
            Stat opened = fstat(fd, path());
            refuseUnlessRegular(opened);
            int flags = LibcFiles.fcntl(fd, LibcFiles.F_GETFL, 0);
            if (flags >= 0) {
                LibcFiles.fcntl(fd, LibcFiles.F_SETFL, flags & ~LibcFiles.O_NONBLOCK); // an ordinary descriptor to read (COMMAND's stdin)
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
            long n = LibcFiles.pread(content.fd(), buf, buf.length, at);
            if (n < 0) {
                if (Errno.last() == Errno.EINTR) {
                    continue;
                }
                throw new AtomicFileException(Reason.IO, "cannot read " + path() + ": " + Errno.describeLast() + "; it is unchanged");
            }
            if (n == 0) {
                return out.toByteArray();
            }
            out.write(buf, 0, (int) n);
            at += n;
        }
    }

    /**
     * Removes the temporary files of this file that dead writers left behind: only exact names of
     * the pattern with this file's hash, only regular files, only those whose writer's flock is
     * gone (taken here, under the exclusive gate, so no writer can be between creating its file
     * and locking it), with {@code unlinkat} (which never follows a link). A live writer's file,
     * under whatever lock name it writes, is never touched. Where the gate cannot be taken (NFS
     * without lock support), nothing is removed.
     *
     * @return the names removed, and the failures as messages
     * @throws AtomicFileException {@link Reason#IO} if someone else holds the gate too long
     */
    public List<String> removeLeftovers() throws AtomicFileException {
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
        if (candidates.isEmpty()) {
            return notes;
        }
        if (!gate(LibcFiles.LOCK_EX)) {
            notes.add("warning: " + candidates.size() + " temporary file(s) of " + text(name) + " in " + directory()
                    + " may be left by interrupted writers, but flock(2) on the directory fails here (" + Errno.describeLast()
                    + "), so whether their writers live cannot be told: remove them by hand once no writer of " + text(name) + " runs");
            return notes;
        }
        try {
            for (byte[] entry : candidates) {
                byte[] c = LibcFiles.cstring(entry);
                int fd = LibcFiles.openat(dirfd, c, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_NONBLOCK | LibcFiles.O_NOCTTY
                        | LibcFiles.O_CLOEXEC, 0);
                if (fd < 0) {
                    continue; // gone, a link (ELOOP) or not ours to read: left alone
                }
                try {
                    LibcFiles.Statx st = LibcFiles.fstat(fd);
                    if (st == null || !st.isRegularFile()) {
                        continue; // not something we made: a FIFO, device or directory is left alone
                    }
                    if (LibcFiles.flock(fd, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB) != 0) {
                        continue; // its writer lives (EWOULDBLOCK), or flock cannot tell: left alone
                    }
                    if (!st.sameFile(LibcFiles.lstatAt(dirfd, c))) {
                        continue; // the name was swapped since the open
                    }
                    if (LibcFiles.unlinkat(dirfd, c, 0) == 0) {
                        notes.add("removed " + text(entry) + " in " + directory() + ", left by a replacement of "
                                + text(name) + " that was interrupted");
                    } else if (Errno.last() != Errno.ENOENT) {
                        notes.add("warning: cannot remove " + text(entry) + " in " + directory() + ": " + Errno.describeLast());
                    }
                } finally {
                    LibcFiles.close(fd);
                }
            }
        } finally {
            ungate();
        }
        return notes;
    }

    /** True for exactly {@code .interlock-<the file's hash>.<16 lowercase hex>.tmp}. */
    public boolean isOurTemp(byte[] entry) {
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
     * Creates the temporary file (mode 0600 while it is ours alone) and flocks it for as long as
     * this process lives (both under the shared gate: see the class comment), then gives it,
     * through its descriptor, the file's owner and group and then its mode (in that order: chown
     * clears the set-user-ID bit), or for a new file mode 0666 less the umask.
     *
     * @param like the file as it is, or null if it does not exist
     * @throws AtomicFileException {@link Reason#IO} if it cannot be created, or cannot get the file's owner and group
     */
    public Temp createTemp(Stat like) throws AtomicFileException {
        byte[] tmpName = null;
        int fd = -1;
        boolean gated = gate(LibcFiles.LOCK_SH);
        try {
            for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
                byte[] random = new byte[RANDOM_HEX / 2];
                RANDOM.nextBytes(random);
                tmpName = concat(tempStem, (HexFormat.of().formatHex(random) + TEMP_SUFFIX).getBytes(StandardCharsets.US_ASCII));
                fd = LibcFiles.openat(dirfd, LibcFiles.cstring(tmpName),
                        LibcFiles.O_WRONLY | LibcFiles.O_CREAT | LibcFiles.O_EXCL | LibcFiles.O_NOFOLLOW | LibcFiles.O_CLOEXEC, 0600);
                if (fd < 0 && Errno.last() != Errno.EEXIST) {
                    throw new AtomicFileException(Reason.IO, "cannot create a temporary file in " + directory() + ": "
                            + Errno.describeLast() + "; " + path() + " is unchanged");
                }
            }
            if (fd >= 0) {
                LibcFiles.flock(fd, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB); // "alive"; without flock support it is never removed as a leftover
            }
        } finally {
            if (gated) {
                ungate();
            }
        }
        if (fd < 0) {
            throw new AtomicFileException(Reason.IO, "cannot create a temporary file in " + directory()
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
                        throw new AtomicFileException(Reason.IO, path() + " belongs to " + Ids.user(like.uid()) + " and group "
                                + Ids.group(like.gid()) + "; running as " + Ids.user(Ids.effectiveUid())
                                + ", Interlock cannot give the new content that owner and group, and will not change"
                                + " them: run it as the file's owner (in its group) or as root. " + path() + " is unchanged");
                    }
                    throw new AtomicFileException(Reason.IO, "cannot give the temporary file " + text(tmpName) + " the owner of "
                            + path() + ": " + Errno.describe(errno) + "; it is unchanged");
                }
                chmod(fd, like.mode() & 07777, tmpName);
            } else {
                chmod(fd, 0666 & ~Ids.umask(), tmpName);
            }
            return made;
        } catch (AtomicFileException | RuntimeException e) {
            if (made != null) {
                removeTemp(made);
            } else {
                LibcFiles.unlinkat(dirfd, LibcFiles.cstring(tmpName), 0);
            }
            LibcFiles.close(fd);
            throw e;
        }
    }

    private void chmod(int fd, int mode, byte[] tmpName) throws AtomicFileException {
        if (LibcFiles.fchmod(fd, mode) != 0) {
            throw new AtomicFileException(Reason.IO, "cannot set the mode of the temporary file " + text(tmpName) + " to "
                    + String.format("%04o", mode) + ": " + Errno.describeLast() + "; " + path() + " is unchanged");
        }
    }

    /**
     * Writes all of {@code content} to the temporary file.
     *
     * @throws AtomicFileException {@link Reason#IO} if a write fails (ENOSPC, EDQUOT, EIO...)
     */
    public void write(Temp t, byte[] content) throws AtomicFileException {
        if (!LibcFiles.writeFully(t.fd(), content)) {
            throw new AtomicFileException(Reason.IO, "cannot write the new content of " + path() + " to the temporary file "
                    + t.shown() + ": " + Errno.describeLast() + "; " + path() + " is unchanged");
        }
    }

    /**
     * Marks the temporary file with fencing token {@code token} (before the commit, which
     * publishes content and token together).
     *
     * @throws AtomicFileException {@link Reason#FENCE_UNSUPPORTED} if the file system keeps no user extended attributes
     */
    public void setFence(Temp t, long token) throws AtomicFileException {
        if (token < 0) {
            throw new IllegalArgumentException("a fencing token is never negative: " + token);
        }
        setFenceValue(t, Long.toString(token).getBytes(StandardCharsets.US_ASCII));
    }

    private void setFenceValue(Temp t, byte[] value) throws AtomicFileException {
        if (LibcFiles.fsetxattr(t.fd(), FENCE_NAME, value, value.length, 0) != 0) {
            int errno = Errno.last();
            if (errno == Errno.EOPNOTSUPP) {
                throw new AtomicFileException(Reason.FENCE_UNSUPPORTED, "cannot fence writes to " + path() + ": the file system of "
                        + directory() + " keeps no user extended attributes (" + Errno.describe(errno) + "), where the fencing"
                        + " token travels with the content; put the file on one that does (ext4, xfs, btrfs, tmpfs on Linux 6.6+,"
                        + " NFS 4.2 with xattr support) or write it unfenced; " + path() + " is unchanged");
            }
            throw new AtomicFileException(Reason.IO, "cannot set the fencing token of the temporary file " + t.shown() + ": "
                    + Errno.describe(errno) + "; " + path() + " is unchanged");
        }
    }

    /**
     * The fencing token the file carries now, or empty if it carries none (or does not exist, or
     * its file system keeps no user extended attributes).
     *
     * @throws AtomicFileException {@link Reason#IO} if the attribute cannot be read or does not hold a token
     */
    public OptionalLong fence() throws AtomicFileException {
        Opened content = openContent();
        if (content == null) {
            return OptionalLong.empty();
        }
        try {
            byte[] raw = fenceValue(content.fd());
            return raw == null ? OptionalLong.empty() : OptionalLong.of(parseToken(raw));
        } finally {
            LibcFiles.close(content.fd());
        }
    }

    /** The raw value of the fence attribute of an open file; null if it has none. */
    private byte[] fenceValue(int fd) throws AtomicFileException {
        byte[] buf = new byte[64];
        long n = LibcFiles.fgetxattr(fd, FENCE_NAME, buf, buf.length);
        if (n < 0) {
            int errno = Errno.last();
            if (errno == Errno.ENODATA || errno == Errno.EOPNOTSUPP) {
                return null;
            }
            if (errno == Errno.ERANGE) {
                throw new AtomicFileException(Reason.IO, path() + " carries a fencing attribute " + FENCE_ATTRIBUTE
                        + " longer than any token (more than 64 bytes); it was not written by Interlock's rules (docs/fencing.md):"
                        + " remove it with setfattr -x " + FENCE_ATTRIBUTE + " once you know why; the file is unchanged");
            }
            throw new AtomicFileException(Reason.IO, "cannot read the fencing token of " + path() + ": " + Errno.describe(errno)
                    + "; it is unchanged");
        }
        return Arrays.copyOf(buf, (int) n);
    }

    /** The token in an attribute value: 1 to 19 ASCII digits, no sign, no leading zero (except "0"), within a long. */
    private long parseToken(byte[] raw) throws AtomicFileException {
        OptionalLong token = tokenOrEmpty(raw);
        if (token.isPresent()) {
            return token.getAsLong();
        }
        throw new AtomicFileException(Reason.IO, path() + " carries a fencing attribute " + FENCE_ATTRIBUTE + " that is not a"
                + " token (decimal digits): \"" + new String(raw, StandardCharsets.ISO_8859_1) + "\"; it was not written by"
                + " Interlock's rules (docs/fencing.md), so no fenced write trusts it: remove it with setfattr -x "
                + FENCE_ATTRIBUTE + " once you know why; the file is unchanged");
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
        if (LibcFiles.fsync(t.fd()) != 0) {
            throw new AtomicFileException(Reason.IO, "cannot flush the temporary file " + t.shown() + " to disk: "
                    + Errno.describeLast() + "; " + path() + " is unchanged");
        }
        boolean gated = gate(LibcFiles.LOCK_EX);
        if (!gated && token >= 0 && lease == null) {
            // Without the gate, the lease keeps writers from committing at once (withdrawOlderWrites handles a late one).
            throw new AtomicFileException(Reason.FENCE_UNSUPPORTED, "cannot fence writes to " + path() + ": flock(2) on its"
                    + " directory " + directory() + " failed (" + Errno.describeLast() + "), and a fenced write without a lease"
                    + " needs it, so that the token check and the rename cannot race; write it under a lease (updateFenced,"
                    + " update --token), put the file on a local file system, or write it unfenced; " + path() + " is unchanged");
        }
        try {
            byte[] ctmp = LibcFiles.cstring(t.name());
            Stat there = lstat(ctmp, t.shown());
            if (!t.stat().sameFile(there)) {
                if (token >= 0) {
                    refuseIfFencedSince(token); // withdrawn by a newer holder's commit
                }
                throw new AtomicFileException(Reason.IO, "the temporary file " + t.shown() + " in " + directory()
                        + " was removed or replaced while the new content was made (by someone else who can write that directory, or by an"
                        + " update of the same file under another lock name); " + path() + " is unchanged");
            }
            byte[] current = currentFence();
            if (token >= 0) {
                if (current != null) {
                    long landed = parseToken(current);
                    if (Long.compareUnsigned(landed, token) > 0) {
                        throw new FencedWriteException(path(), token, landed);
                    }
                }
                withdrawOlderWrites(t, token, gated);
            } else if (current != null) {
                setFenceValue(t, current); // an unfenced write keeps the file's token
                if (LibcFiles.fsync(t.fd()) != 0) {
                    throw new AtomicFileException(Reason.IO, "cannot flush the temporary file " + t.shown() + " to disk: "
                            + Errno.describeLast() + "; " + path() + " is unchanged");
                }
            }
            if (lease != null && !lease.isValid()) {
                throw new AtomicFileException(Reason.LEASE_NOT_VALID, "the lease on " + lease.name() + " (token " + lease.token()
                        + ") is no longer valid: it ran out, was lost or was closed before the new content could replace "
                        + path() + "; it is unchanged");
            }
            if (LibcFiles.renameat(dirfd, ctmp, dirfd, cname) != 0) {
                int errno = Errno.last();
                if (errno == Errno.ENOENT && token >= 0) {
                    refuseIfFencedSince(token); // a newer holder withdrew our temporary file: see withdrawOlderWrites
                }
                throw new AtomicFileException(Reason.IO, "cannot rename " + t.shown() + " over " + path() + ": "
                        + Errno.describe(errno) + "; it is unchanged");
            }
        } finally {
            if (gated) {
                ungate();
            }
        }
        LibcFiles.fsync(dirfd); // some file systems cannot flush a directory (EINVAL); the rename is done either way
        Stat now = lstatOrNull(cname);
        return t.stat().sameFile(now);
    }

    /**
     * Removes the temporary files of this file that carry a smaller fencing token than
     * {@code token}: writes prepared by older holders, which must never land now. A stale holder
     * whose rename is held up after its checks (a hard NFS mount cut off from its server sends
     * the rename again when the link returns, long after its lease ran out and the next holder
     * wrote) then renames a name the server no longer has, and the server refuses it (ENOENT),
     * instead of putting old content over newer. Its temporary file exists before its lease ends
     * (it was made and flushed before the checks), so before any newer holder gets here; the
     * listing opens the directory anew (on NFS that revalidates it). Without the gate (which orders
     * writers of this host on its own), a directory that cannot be listed refuses the write.
     * Unfenced temporary files, and those with this token or a larger one, are left alone.
     */
    private void withdrawOlderWrites(Temp ours, long token, boolean gated) throws AtomicFileException {
        List<LibcFiles.DirEntry> entries = LibcFiles.readDirectory(dirfd);
        if (entries == null) {
            if (gated) {
                return;
            }
            throw new AtomicFileException(Reason.IO, "cannot list " + directory() + " to withdraw older holders' writes of "
                    + text(name) + " (" + Errno.describeLast() + "); " + path() + " is unchanged");
        }
        for (LibcFiles.DirEntry e : entries) {
            if (!isOurTemp(e.name()) || Arrays.equals(e.name(), ours.name())) {
                continue;
            }
            byte[] c = LibcFiles.cstring(e.name());
            int fd = LibcFiles.openat(dirfd, c, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_NONBLOCK | LibcFiles.O_NOCTTY
                    | LibcFiles.O_CLOEXEC, 0);
            if (fd < 0) {
                continue; // gone (renamed or removed meanwhile), a link, or not ours to read: left alone
            }
            try {
                LibcFiles.Statx st = LibcFiles.fstat(fd);
                if (st == null || !st.isRegularFile()) {
                    continue;
                }
                byte[] raw = fenceValue(fd);
                OptionalLong theirs = raw == null ? OptionalLong.empty() : tokenOrEmpty(raw);
                if (theirs.isPresent() && Long.compareUnsigned(theirs.getAsLong(), token) < 0 && st.sameFile(LibcFiles.lstatAt(dirfd, c))) {
                    LibcFiles.unlinkat(dirfd, c, 0); // ENOENT: renamed or removed meanwhile, which is as good
                }
            } finally {
                LibcFiles.close(fd);
            }
        }
    }

    /** After a fenced rename found its temporary file gone: a FencedWriteException if a larger token has landed since. */
    private void refuseIfFencedSince(long token) throws AtomicFileException {
        byte[] current = currentFence();
        if (current != null) {
            long landed = parseToken(current);
            if (Long.compareUnsigned(landed, token) > 0) {
                throw new FencedWriteException(path(), token, landed);
            }
        }
    }

    /** The token in an attribute value (see {@link #parseToken}), or empty if it holds none. */
    private static OptionalLong tokenOrEmpty(byte[] raw) {
        if (raw.length < 1 || raw.length > 19 || (raw[0] == '0' && raw.length > 1)) {
            return OptionalLong.empty();
        }
        for (byte b : raw) {
            if (b < '0' || b > '9') {
                return OptionalLong.empty();
            }
        }
        try {
            return OptionalLong.of(Long.parseLong(new String(raw, StandardCharsets.US_ASCII)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** The raw fence attribute of what the file's name holds now; null if none (or no file, or not a regular file). */
    private byte[] currentFence() throws AtomicFileException {
        int fd = LibcFiles.openat(dirfd, cname, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW | LibcFiles.O_NONBLOCK | LibcFiles.O_NOCTTY
                | LibcFiles.O_CLOEXEC, 0);
        if (fd < 0) {
            int errno = Errno.last();
            if (errno == Errno.ENOENT) {
                return null;
            }
            Stat now = lstat(cname, path());
            if (now != null) {
                refuseUnlessRegular(now);
            }
            throw new AtomicFileException(Reason.IO, "cannot open " + path() + " to read its fencing token: " + Errno.describe(errno)
                    + "; it is unchanged");
        }
        try {
            LibcFiles.Statx st = LibcFiles.fstat(fd);
            if (st != null && !st.isRegularFile()) {
                refuseUnlessRegular(Stat.of(st));
            }
            return fenceValue(fd);
        } finally {
            LibcFiles.close(fd);
        }
    }

    /**
     * Takes the gate (flock on the directory); false, errno set, if this file system cannot.
     *
     * @throws AtomicFileException {@link Reason#IO} if someone else holds it past the limit
     */
    private boolean gate(int op) throws AtomicFileException {
        if (!gateAvailable) {
            return false;
        }
        return DirectoryGate.take(dirfd, op, directory(), path(), gateNotice);
    }

    private void ungate() {
        LibcFiles.flock(dirfd, LibcFiles.LOCK_UN);
    }

    /** Removes the temporary file if its name still holds it (never what someone put there instead). */
    public boolean removeTemp(Temp t) {
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

    private Stat lstat(byte[] cpath, String shown) throws AtomicFileException {
        LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, cpath);
        if (st == null) {
            int errno = Errno.last();
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

    private Stat lstatOrNull(byte[] cpath) {
        LibcFiles.Statx st = LibcFiles.lstatAt(dirfd, cpath);
        return st == null ? null : Stat.of(st);
    }

    private static Stat fstat(int fd, String shown) throws AtomicFileException {
        LibcFiles.Statx st = LibcFiles.fstat(fd);
        if (st == null) {
            throw new AtomicFileException(Reason.IO, "cannot look at " + shown + ": " + Errno.describeLast());
        }
        return Stat.of(st);
    }

    private void refuseUnlessRegular(Stat st) throws AtomicFileException {
        switch (st.type()) {
            case S_IFREG:
                return;
            case S_IFDIR:
                throw new AtomicFileException(Reason.BAD_PATH, path() + " is a directory; only a file can be replaced: name a file in it");
            case S_IFLNK:
                throw symlink();
            default:
                throw new AtomicFileException(Reason.BAD_PATH, path() + " is " + typeName(st.type())
                        + ", not a regular file; only regular files are replaced (reading one would consume or block, and a"
                        + " regular file would take its place): name a regular file");
        }
    }

    /**
     * A link is refused rather than followed: whoever can write the file's directory could point
     * it elsewhere between our look and our write. The message says where it points so the user
     * can pass that path, whose own directory is then opened as the kernel resolves it.
     */
    private AtomicFileException symlink() {
        byte[] buf = new byte[4096];
        long n = LibcFiles.readlinkat(dirfd, cname, buf, buf.length);
        if (n < 0) {
            return new AtomicFileException(Reason.BAD_PATH, path() + " is a symbolic link; links are not followed"
                    + " (whoever can write " + directory() + " could redirect it): pass the path of the file it points to");
        }
        byte[] target = Arrays.copyOf(buf, (int) n);
        byte[] full = target.length > 0 && target[0] == '/' ? target
                : concat(concat(dirPath, dirPath.length == 1 && dirPath[0] == '/' ? new byte[0] : new byte[] {'/'}), target);
        return new AtomicFileException(Reason.BAD_PATH, path() + " is a symbolic link to " + text(target)
                + "; links are not followed (whoever can write " + directory() + " could point it elsewhere between"
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
    private static byte[] realPath(int fd, byte[] typed) throws AtomicFileException {
        byte[] buf = new byte[4096];
        byte[] proc = LibcFiles.cstring(("/proc/self/fd/" + fd).getBytes(StandardCharsets.US_ASCII));
        long n = LibcFiles.readlinkat(LibcFiles.AT_FDCWD, proc, buf, buf.length);
        if (n <= 0 || buf[0] != '/') {
            throw new AtomicFileException(Reason.SYSTEM, "cannot read the real path of " + text(typed) + " from /proc/self/fd"
                    + (n < 0 ? ": " + Errno.describeLast() : "") + "; Interlock needs /proc mounted");
        }
        return Arrays.copyOf(buf, (int) n);
    }

    /** Moves a descriptor to 3 or above, so that giving COMMAND its stdin and stdout cannot overwrite another. */
    private static int aboveStdio(int fd) throws AtomicFileException {
        if (fd > 2) {
            return fd;
        }
        int moved = LibcFiles.fcntl(fd, LibcFiles.F_DUPFD_CLOEXEC, 3);
        int errno = Errno.last();
        LibcFiles.close(fd);
        if (moved < 0) {
            throw new AtomicFileException(Reason.SYSTEM, "cannot duplicate a descriptor: " + Errno.describe(errno));
        }
        return moved;
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
    public static final class Ids {
        private Ids() {}

        public static String user(int uid) {
            return describe(uid, Path.of("/etc/passwd"));
        }

        public static String group(int gid) {
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
        public static int umask() {
            String v = status("Umask:");
            try {
                return v == null ? 022 : Integer.parseInt(v.trim(), 8);
            } catch (NumberFormatException e) {
                return 022;
            }
        }

        public static int effectiveUid() {
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
