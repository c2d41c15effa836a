package dev.interlock.file.internal;

/**
 * Internal API of Interlock (not for applications; may change in any release): which events about entries of a watched directory a watch wants now, by the entry's name:
 * called by the reading thread for each such event, so it must be quick and must not block.
 * Events without a name (about the watched inode itself) always wake.
 */
@FunctionalInterface
public interface NameFilter {
    /** True if the event {@code mask} about the entry named by {@code nameLen} bytes of {@code buf} from {@code off} wakes. */
    boolean wants(int mask, byte[] buf, int off, int nameLen);

    /** True if the name ({@code len} bytes of {@code buf} from {@code off}) starts with {@code prefix} (ASCII). */
    static boolean startsWith(byte[] buf, int off, int len, String prefix) {
        if (len < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (buf[off + i] != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** True if the name contains {@code part} (ASCII bytes). */
    static boolean contains(byte[] buf, int off, int len, byte[] part) {
        outer:
        for (int i = 0; i + part.length <= len; i++) {
            for (int j = 0; j < part.length; j++) {
                if (buf[off + i + j] != part[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }
}
