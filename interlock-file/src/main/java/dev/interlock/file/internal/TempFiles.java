package dev.interlock.file.internal;

import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalLong;

/**
 * The temporary files of one {@link ReplaceTarget}: named {@code .interlock-<16 hex of
 * SHA-256(file name)>.<16 random hex>.tmp}, created beside the file with {@code O_EXCL}, flocked by
 * their writer for as long as it lives, removed when provably a dead writer's leftover, and
 * withdrawn when an older holder's fenced write must never land (see the class comment of
 * {@link ReplaceTarget}).
 */
final class TempFiles {
    static final int RANDOM_HEX = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ReplaceTarget target;

    TempFiles(ReplaceTarget target) {
        this.target = target;
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
    List<String> removeLeftovers() throws AtomicFileException {
        List<String> notes = new ArrayList<>();
        List<byte[]> candidates = new ArrayList<>();
        List<LibcFiles.DirEntry> entries;
        try {
            entries = NativeFiles.readDirectory(target.dirfd);
        } catch (ErrnoException e) {
            notes.add(
                    "warning: cannot list " + target.directory() + " for leftover temporary files: " + e.getMessage());
            return notes;
        }
        for (LibcFiles.DirEntry e : entries) {
            if (isOurs(e.name())) {
                candidates.add(e.name());
            }
        }
        if (candidates.isEmpty()) {
            return notes;
        }
        String noGate = target.gate(LibcFiles.LOCK_EX);
        if (noGate != null) {
            notes.add("warning: " + candidates.size() + " temporary file(s) of " + ReplaceTarget.text(target.name)
                    + " in " + target.directory()
                    + " may be left by interrupted writers, but flock(2) on the directory fails here ("
                    + noGate
                    + "), so whether their writers live cannot be told: remove them by hand once no writer of "
                    + ReplaceTarget.text(target.name) + " runs");
            return notes;
        }
        try {
            for (byte[] entry : candidates) {
                byte[] c = LibcFiles.cstring(entry);
                int fd = LibcFiles.openat(target.dirfd, c, LibcFiles.O_READ_NO_FOLLOW, 0);
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
                    if (!st.sameFile(LibcFiles.lstatAt(target.dirfd, c))) {
                        continue; // the name was swapped since the open
                    }
                    try {
                        NativeFiles.unlinkat(target.dirfd, c, 0);
                        notes.add("removed " + ReplaceTarget.text(entry) + " in " + target.directory()
                                + ", left by a replacement of " + ReplaceTarget.text(target.name)
                                + " that was interrupted");
                    } catch (ErrnoException e) {
                        if (e.errno() != Errno.ENOENT) {
                            notes.add("warning: cannot remove " + ReplaceTarget.text(entry) + " in "
                                    + target.directory() + ": " + e.getMessage());
                        }
                    }
                } finally {
                    LibcFiles.close(fd);
                }
            }
        } finally {
            target.ungate();
        }
        return notes;
    }

    /** True for exactly {@code .interlock-<the file's hash>.<16 lowercase hex>.tmp}. */
    boolean isOurs(byte[] entry) {
        if (entry.length != target.tempStem.length + RANDOM_HEX + ReplaceTarget.TEMP_SUFFIX.length()
                || !Arrays.equals(entry, 0, target.tempStem.length, target.tempStem, 0, target.tempStem.length)) {
            return false;
        }
        for (int i = target.tempStem.length; i < target.tempStem.length + RANDOM_HEX; i++) {
            byte b = entry[i];
            if (!((b >= '0' && b <= '9') || (b >= 'a' && b <= 'f'))) {
                return false;
            }
        }
        byte[] suffix = ReplaceTarget.TEMP_SUFFIX.getBytes(StandardCharsets.US_ASCII);
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
    ReplaceTarget.Temp create(ReplaceTarget.Stat like) throws AtomicFileException {
        byte[] tmpName = null;
        int fd = -1;
        boolean gated = target.gate(LibcFiles.LOCK_SH) == null;
        try {
            for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
                byte[] random = new byte[RANDOM_HEX / 2];
                RANDOM.nextBytes(random);
                tmpName = ReplaceTarget.concat(
                        target.tempStem,
                        (HexFormat.of().formatHex(random) + ReplaceTarget.TEMP_SUFFIX)
                                .getBytes(StandardCharsets.US_ASCII));
                try {
                    fd = NativeFiles.openat(
                            target.dirfd, LibcFiles.cstring(tmpName), LibcFiles.O_CREATE_NEW_NO_FOLLOW, 0600);
                } catch (ErrnoException e) {
                    if (e.errno() != Errno.EEXIST) {
                        throw new AtomicFileException(
                                Reason.IO,
                                "cannot create a temporary file in " + target.directory() + ": " + e.getMessage() + "; "
                                        + target.path() + " is unchanged");
                    }
                }
            }
            if (fd >= 0) {
                LibcFiles.flock(
                        fd,
                        LibcFiles.LOCK_EX
                                | LibcFiles
                                        .LOCK_NB); // "alive"; without flock support it is never removed as a leftover
            }
        } finally {
            if (gated) {
                target.ungate();
            }
        }
        if (fd < 0) {
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot create a temporary file in " + target.directory() + ": every name tried exists; "
                            + target.path() + " is unchanged");
        }
        ReplaceTarget.Temp made = null;
        try {
            fd = ReplaceTarget.aboveStdio(fd);
            made = new ReplaceTarget.Temp(tmpName, fd, ReplaceTarget.fstat(fd, ReplaceTarget.text(tmpName)));
            if (like != null) {
                try {
                    NativeFiles.fchown(fd, like.uid(), like.gid());
                } catch (ErrnoException e) {
                    if (e.errno() == Errno.EPERM) {
                        throw new AtomicFileException(
                                Reason.IO,
                                target.path() + " belongs to " + Ids.user(like.uid()) + " and group "
                                        + Ids.group(like.gid()) + "; running as " + Ids.user(Ids.effectiveUid())
                                        + ", Interlock cannot give the new content that owner and group, and will not change"
                                        + " them: run it as the file's owner (in its group) or as root. "
                                        + target.path() + " is unchanged");
                    }
                    throw new AtomicFileException(
                            Reason.IO,
                            "cannot give the temporary file " + ReplaceTarget.text(tmpName) + " the owner of "
                                    + target.path() + ": " + e.getMessage() + "; it is unchanged");
                }
                chmod(fd, like.mode() & 07777, tmpName);
            } else {
                chmod(fd, 0666 & ~Ids.umask(), tmpName);
            }
            return made;
        } catch (AtomicFileException | RuntimeException e) {
            if (made != null) {
                remove(made);
            } else {
                LibcFiles.unlinkat(target.dirfd, LibcFiles.cstring(tmpName), 0);
            }
            LibcFiles.close(fd);
            throw e;
        }
    }

    private void chmod(int fd, int mode, byte[] tmpName) throws AtomicFileException {
        try {
            NativeFiles.fchmod(fd, mode);
        } catch (ErrnoException e) {
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot set the mode of the temporary file " + ReplaceTarget.text(tmpName) + " to "
                            + String.format("%04o", mode) + ": " + e.getMessage() + "; " + target.path()
                            + " is unchanged");
        }
    }

    /**
     * Writes all of {@code content} to the temporary file.
     *
     * @throws AtomicFileException {@link Reason#IO} if a write fails (ENOSPC, EDQUOT, EIO...)
     */
    void write(ReplaceTarget.Temp t, byte[] content) throws AtomicFileException {
        try {
            NativeFiles.writeFully(t.fd(), content);
        } catch (ErrnoException e) {
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot write the new content of " + target.path() + " to the temporary file " + t.shown() + ": "
                            + e.getMessage() + "; " + target.path() + " is unchanged");
        }
    }

    /** Removes the temporary file if its name still holds it (never what someone put there instead). */
    boolean remove(ReplaceTarget.Temp t) {
        synchronized (target.fdLock) {
            if (target.dirfd < 0) {
                return false;
            }
            byte[] ctmp = LibcFiles.cstring(t.name());
            ReplaceTarget.Stat there = target.lstatOrNull(ctmp);
            return t.stat().sameFile(there) && LibcFiles.unlinkat(target.dirfd, ctmp, 0) == 0;
        }
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
    void withdrawOlderWrites(ReplaceTarget.Temp ours, long token, boolean gated) throws AtomicFileException {
        List<LibcFiles.DirEntry> entries;
        try {
            entries = NativeFiles.readDirectory(target.dirfd);
        } catch (ErrnoException e) {
            if (gated) {
                return;
            }
            throw new AtomicFileException(
                    Reason.IO,
                    "cannot list " + target.directory() + " to withdraw older holders' writes of "
                            + ReplaceTarget.text(target.name) + " (" + e.getMessage() + "); " + target.path()
                            + " is unchanged");
        }
        for (LibcFiles.DirEntry e : entries) {
            if (!isOurs(e.name()) || Arrays.equals(e.name(), ours.name())) {
                continue;
            }
            byte[] c = LibcFiles.cstring(e.name());
            int fd = LibcFiles.openat(target.dirfd, c, LibcFiles.O_READ_NO_FOLLOW, 0);
            if (fd < 0) {
                continue; // gone (renamed or removed meanwhile), a link, or not ours to read: left alone
            }
            try {
                LibcFiles.Statx st = LibcFiles.fstat(fd);
                if (st == null || !st.isRegularFile()) {
                    continue;
                }
                byte[] raw = target.fences.read(fd);
                OptionalLong theirs = raw == null ? OptionalLong.empty() : FenceAttribute.tokenOrEmpty(raw);
                if (theirs.isPresent()
                        && Long.compareUnsigned(theirs.getAsLong(), token) < 0
                        && st.sameFile(LibcFiles.lstatAt(target.dirfd, c))) {
                    LibcFiles.unlinkat(target.dirfd, c, 0); // ENOENT: renamed or removed meanwhile, which is as good
                }
            } finally {
                LibcFiles.close(fd);
            }
        }
    }
}
