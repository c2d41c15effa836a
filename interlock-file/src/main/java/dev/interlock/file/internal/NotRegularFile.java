package dev.interlock.file.internal;

import static dev.interlock.file.internal.LibcFiles.S_IFBLK;
import static dev.interlock.file.internal.LibcFiles.S_IFCHR;
import static dev.interlock.file.internal.LibcFiles.S_IFDIR;
import static dev.interlock.file.internal.LibcFiles.S_IFIFO;
import static dev.interlock.file.internal.LibcFiles.S_IFLNK;
import static dev.interlock.file.internal.LibcFiles.S_IFREG;
import static dev.interlock.file.internal.LibcFiles.S_IFSOCK;

import dev.interlock.file.AtomicFileException;
import dev.interlock.file.AtomicFileException.Reason;
import java.util.Arrays;

/**
 * The refusal of anything but a regular file as the file a {@link ReplaceTarget} replaces: a
 * directory, a symbolic link (never followed; the message says where it points), a FIFO, a
 * device or a socket, each named so that the user knows what to pass instead.
 */
final class NotRegularFile {
    private NotRegularFile() {}

    /** Returns if {@code st} is a regular file; otherwise throws the message for what it is. */
    static void refuse(ReplaceTarget file, ReplaceTarget.Stat st) throws AtomicFileException {
        switch (st.type()) {
            case S_IFREG:
                return;
            case S_IFDIR:
                throw new AtomicFileException(
                        Reason.BAD_PATH,
                        file.path() + " is a directory; only a file can be replaced: name a file in it");
            case S_IFLNK:
                throw symlink(file);
            default:
                throw new AtomicFileException(
                        Reason.BAD_PATH,
                        file.path() + " is " + typeName(st.type())
                                + ", not a regular file; only regular files are replaced (reading one would consume or block, and a"
                                + " regular file would take its place): name a regular file");
        }
    }

    /**
     * A link is refused rather than followed: whoever can write the file's directory could point
     * it elsewhere between our look and our write. The message says where it points so the user
     * can pass that path, whose own directory is then opened as the kernel resolves it.
     */
    private static AtomicFileException symlink(ReplaceTarget file) {
        byte[] buf = new byte[4096];
        long n = LibcFiles.readlinkat(file.dirfd, file.cname, buf, buf.length);
        if (n < 0) {
            return new AtomicFileException(
                    Reason.BAD_PATH,
                    file.path() + " is a symbolic link; links are not followed" + " (whoever can write "
                            + file.directory() + " could redirect it): pass the path of the file it points to");
        }
        byte[] target = Arrays.copyOf(buf, (int) n);
        byte[] full = target.length > 0 && target[0] == '/'
                ? target
                : ReplaceTarget.concat(
                        ReplaceTarget.concat(
                                file.dirPath,
                                file.dirPath.length == 1 && file.dirPath[0] == '/' ? new byte[0] : new byte[] {'/'}),
                        target);
        return new AtomicFileException(
                Reason.BAD_PATH,
                file.path() + " is a symbolic link to " + ReplaceTarget.text(target)
                        + "; links are not followed (whoever can write " + file.directory()
                        + " could point it elsewhere between"
                        + " the check and the write): pass the path it points to, " + ReplaceTarget.text(full));
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
}
