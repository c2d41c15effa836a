package dev.interlock.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A system program found by absolute path, never through the caller's PATH: {@code run} often runs
 * as root, and a program planted earlier in PATH would run with its rights. A candidate is taken
 * only if it, and every directory above it (links resolved), belongs to root or to this user and
 * can be written by no one else (no group or other write bit), as OpenSSH checks the files it trusts.
 */
final class TrustedProgram {
    /** Where the system keeps its programs, in the order looked at; never PATH. */
    static final List<String> SYSTEM_DIRECTORIES = List.of("/usr/bin", "/bin");

    private TrustedProgram() {}

    /** The absolute real path of {@code name} in {@link #SYSTEM_DIRECTORIES}, if one is safe to run. */
    static Optional<String> find(String name) {
        for (String dir : SYSTEM_DIRECTORIES) {
            Optional<String> found = trusted(Path.of(dir, name));
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    private static Optional<String> trusted(Path candidate) {
        try {
            Path real = candidate.toRealPath();
            if (!Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS) || !Files.isExecutable(real)) {
                return Optional.empty();
            }
            for (Path p = real; p != null; p = p.getParent()) {
                if (!onlyOwnerCanChange(p)) {
                    return Optional.empty();
                }
            }
            return Optional.of(real.toString());
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }

    private static boolean onlyOwnerCanChange(Path p) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
        int uid = (Integer) a.get("uid");
        int mode = (Integer) a.get("mode");
        return (uid == 0 || uid == effectiveUid()) && (mode & 0022) == 0;
    }

    /** The second number of /proc/self/status's "Uid:" line (real, effective, saved, file system), or -1. */
    private static long effectiveUid() {
        String ids = Env.statusField("Uid");
        if (ids == null) {
            return -1;
        }
        int i = 0;
        while (i < ids.length() && !Character.isDigit(ids.charAt(i))) {
            i++;
        }
        while (i < ids.length() && Character.isDigit(ids.charAt(i))) {
            i++;
        }
        return Env.firstNumber(ids, i);
    }
}
