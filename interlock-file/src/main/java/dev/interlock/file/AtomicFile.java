package dev.interlock.file;

import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.ReplaceTarget;
import dev.interlock.spi.support.Log;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;

/**
 * A file replaced atomically: readers, and the file after a crash at any moment, see the old
 * content or the new, never a mix, never an empty file; and, with a lease, only while the lock is
 * still held; and, fenced, never after a newer holder's write.
 *
 * <p>Every write is the safe-update recipe (lock, read, write a temporary file, rename
 * it over the real one, unlock), done so that it survives crashes and other users:
 * <ol>
 *   <li>the file's directory is opened once; everything after is relative to that descriptor
 *       and never follows a link, so a name planted or swapped in the directory (by another user
 *       who can write it) can make a write fail, never make it read or write another file;</li>
 *   <li>a temporary file is created beside the file ({@code O_EXCL|O_NOFOLLOW}, mode 0600), the
 *       new content written to it and given the file's owner, group and mode through its
 *       descriptor, then flushed to disk ({@code fsync});</li>
 *   <li>it is renamed over the file ({@code renameat}: atomic), and the directory flushed.</li>
 * </ol>
 * If the process dies at any point, the file is whole: the old content (and its temporary file is
 * left behind, removed by the next writer once provably dead; see {@code docs/fencing.md}) or the
 * new. Concurrent writers do not tear the file either, but the last rename wins: to read, change
 * and write without losing another writer's change, hold a lock ({@link #update(Lease, UnaryOperator)}).
 *
 * <p><b>What is refused.</b> Only regular files are replaced. A directory, FIFO, device or socket is
 * refused ({@link AtomicFileException.Reason#BAD_PATH}); so is a <em>symbolic link</em>, which is
 * never followed: whoever can write the directory could point it elsewhere between the check and
 * the write (pass the path it points to). A file the writer cannot give its owner and group (it
 * runs as neither the owner nor root) is refused rather than silently re-owned. Unreadable files,
 * read-only file systems and a full disk fail with the errno text; the old content stays.
 *
 * <p><b>Fencing.</b> A fenced write ({@link #write(byte[], long)}, {@link #updateFenced}) carries a
 * token (normally {@link Lease#token()}) in the extended attribute {@code user.interlock.fence} of
 * the new file, set before the rename, so the rename publishes content and token together. It is
 * refused with {@link FencedWriteException} if the file already carries a larger token. An unfenced
 * write keeps the file's token. The format and the rule are in {@code docs/fencing.md}, so
 * programs in other languages can honour them.
 *
 * <p>Instances are immutable and cheap; each operation opens and closes what it uses. Paths are
 * resolved at each operation. Linux only.
 */
public final class AtomicFile {
    /** The extended attribute that carries a file's fencing token: ASCII decimal digits (docs/fencing.md). */
    public static final String FENCE_ATTRIBUTE = ReplaceTarget.FENCE_ATTRIBUTE;

    private static final Log LOG = Log.of(AtomicFile.class);

    private final Path path;

    private AtomicFile(Path path) {
        this.path = path;
    }

    /** The file at {@code path} (it need not exist; its directory must when it is written). Does no I/O. */
    public static AtomicFile of(Path path) {
        return new AtomicFile(Objects.requireNonNull(path, "path"));
    }

    /** The path given. */
    public Path path() {
        return path;
    }

    /**
     * The file's content, or empty if it does not exist.
     *
     * @throws AtomicFileException if it is not a regular file (links are not followed) or cannot be read
     */
    public Optional<byte[]> read() throws IOException {
        try (ReplaceTarget t = ReplaceTarget.open(path)) {
            ReplaceTarget.Opened content = t.openContent();
            if (content == null) {
                return Optional.empty();
            }
            try {
                return Optional.of(t.readAll(content));
            } finally {
                LibcFiles.close(content.fd());
            }
        }
    }

    /**
     * The fencing token of the last fenced write that landed on the file; empty if none did (or
     * the file does not exist, or its file system keeps no user extended attributes).
     *
     * @throws AtomicFileException if the file cannot be opened, or its attribute does not hold a token
     */
    public OptionalLong fence() throws IOException {
        try (ReplaceTarget t = ReplaceTarget.open(path)) {
            return t.fence();
        }
    }

    /**
     * Replaces the file's content with {@code content}, atomically, keeping its owner, group, mode
     * and fencing token (a new file gets mode 0666 less the umask).
     *
     * @throws AtomicFileException if it cannot be replaced; it is then unchanged
     */
    public void write(byte[] content) throws IOException {
        Objects.requireNonNull(content, "content");
        replace(old -> content, -1, null);
    }

    /**
     * A fenced write: replaces the content as {@link #write(byte[])} does, unless a write with a
     * token larger than {@code token} already landed on the file. The file then carries
     * {@code token}. Equal tokens pass: one holder may write several times.
     *
     * @param token the writer's fencing token, normally {@link Lease#token()}; not negative
     * @throws FencedWriteException if the file carries a larger token; it is unchanged
     * @throws AtomicFileException {@link AtomicFileException.Reason#FENCE_UNSUPPORTED} if the file system keeps
     *     no user extended attributes (never an unfenced write instead), or another failure; the file is unchanged
     */
    public void write(byte[] content, long token) throws IOException {
        Objects.requireNonNull(content, "content");
        requireToken(token);
        replace(old -> content, token, null);
    }

    /**
     * Reads the content, applies {@code change} and writes the result, all under {@code lease}
     * (which the caller holds on the lock that every writer of this file takes): the write is
     * refused if the lease is no longer valid just before the rename (checked with the gate held,
     * after everything that can take time). Not fenced; see {@link #updateFenced}.
     *
     * @param change the old content (empty if the file does not exist) to the new; null leaves the file as it is.
     *     It runs on the calling thread; an exception from it leaves the file as it is and is thrown as it is
     * @return the content the file has now: the new, or the old if {@code change} returned null
     * @throws AtomicFileException {@link AtomicFileException.Reason#LEASE_NOT_VALID} if the lease was not valid at
     *     the moment of the write, or another failure; the file is unchanged
     */
    public byte[] update(Lease lease, UnaryOperator<byte[]> change) throws IOException {
        Objects.requireNonNull(lease, "lease");
        return replace(change, -1, lease);
    }

    /**
     * {@link #update(Lease, UnaryOperator)}, fenced with the lease's token: also refused if a write
     * with a larger token (by a later holder of the lock) already landed on the file, which is what
     * protects the file from a holder paused past its lease.
     *
     * @throws FencedWriteException if the file carries a larger token than {@code lease.token()}; it is unchanged
     * @throws AtomicFileException as {@link #update(Lease, UnaryOperator)} and {@link #write(byte[], long)}
     */
    public byte[] updateFenced(Lease lease, UnaryOperator<byte[]> change) throws IOException {
        Objects.requireNonNull(lease, "lease");
        requireToken(lease.token());
        return replace(change, lease.token(), lease);
    }

    /**
     * Takes {@code name} exclusively in {@code locks} (waiting up to {@code wait}), then
     * {@link #update(Lease, UnaryOperator)} under it, then releases it. Every writer of the file
     * must use the same lock name for no change to be lost.
     *
     * @throws dev.interlock.LockTimeoutException if the lock was not acquired in time; the file is unchanged
     * @throws InterruptedException if interrupted while waiting; the file is unchanged
     */
    public byte[] update(LockSpace locks, String name, Duration wait, UnaryOperator<byte[]> change)
            throws IOException, InterruptedException {
        Objects.requireNonNull(change, "change");
        try (Lease lease = locks.acquire(name, wait)) {
            return update(lease, change);
        }
    }

    private static void requireToken(long token) {
        if (token < 0) {
            throw new IllegalArgumentException("a fencing token is never negative; got " + token);
        }
    }

    private byte[] replace(UnaryOperator<byte[]> change, long token, Lease lease) throws IOException {
        Objects.requireNonNull(change, "change");
        try (ReplaceTarget t = ReplaceTarget.open(path)) {
            ReplaceTarget.Opened content = t.openContent();
            byte[] old;
            try {
                old = content == null ? new byte[0] : t.readAll(content);
            } finally {
                if (content != null) {
                    LibcFiles.close(content.fd());
                }
            }
            byte[] next = change.apply(old);
            if (next == null) {
                return old;
            }
            for (String note : t.removeLeftovers()) {
                if (note.startsWith("warning: ")) {
                    LOG.warn("{}", note.substring("warning: ".length()));
                } else {
                    LOG.info("{}", note);
                }
            }
            ReplaceTarget.Temp tmp = t.createTemp(content == null ? null : content.stat());
            boolean replaced = false;
            try {
                t.write(tmp, next);
                if (token >= 0) {
                    t.setFence(tmp, token);
                }
                t.commit(tmp, token, lease);
                replaced = true;
                return next;
            } finally {
                if (!replaced) {
                    t.removeTemp(tmp);
                }
                LibcFiles.close(tmp.fd());
            }
        }
    }
}
