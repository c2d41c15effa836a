package dev.interlock.cli;

import dev.interlock.spi.support.Durations;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The end of a verify run on several hosts, on each host: marking its records read, and on the
 * lead removing the run directory once every host has read it (or when the hosts never all
 * came), with the shared directory verify made in the lock directory if no other run uses it.
 */
final class VerifyMultiHost {
    private final boolean leading;
    private final boolean sharedDirGiven;
    private final VerifyProgress progress;
    private final PrintWriter err;

    /**
     * @param leading this host leads the run (it removes what the run leaves)
     * @param sharedDirGiven the shared directory was given (--shared-dir), so it is not verify's to remove
     */
    VerifyMultiHost(boolean leading, boolean sharedDirGiven, VerifyProgress progress, PrintWriter err) {
        this.leading = leading;
        this.sharedDirGiven = sharedDirGiven;
        this.progress = progress;
        this.err = err;
    }

    /**
     * Marks this host merged (it has read everything); the lead then waits up to {@code waitHosts}
     * for every host to have done so and removes the run, or leaves it and says why.
     */
    void finish(VerifyRunDir runDir, Path work, boolean generated, String uri, String lockName, Duration waitHosts)
            throws InterruptedException {
        runDir.mark(work, "merged");
        if (!leading) {
            return;
        }
        progress.show("waiting for every host to read the records");
        List<Path> unread = runDir.removeOnceEveryHostRead(runDir.deadlineIn(waitHosts));
        progress.clear();
        if (!unread.isEmpty()) {
            err.println("interlock verify: left the run directory " + runDir.run + ": " + unread.size()
                    + " host(s) did not say"
                    + " within " + Durations.format(waitHosts) + " that they had read it ("
                    + unread.stream().map(p -> p.getFileName().toString()).collect(Collectors.joining(", "))
                    + "); remove it (rm -r " + runDir.run + ") once every host has"
                    + " printed its result");
            err.flush();
            return;
        }
        removeSharedIfEmpty(runDir);
        Optional<Path> lockDir = FileSystemProbe.directoryOf(uri);
        if (generated && lockDir.isPresent()) {
            VerifyFiles.removeLockFiles(
                    uri.substring(0, uri.indexOf(':')).toLowerCase(Locale.ROOT), lockDir.get(), lockName);
        }
    }

    /**
     * The lead gives up a run whose hosts never all came: the run cannot complete, and its
     * directory is the lead's to remove (hosts that did join then say that it was removed).
     * Returns what was done, for the message; nothing on a joining host.
     */
    String abandon(VerifyRunDir runDir) {
        if (!leading) {
            return "";
        }
        VerifyFiles.deleteTree(runDir.run);
        if (Files.exists(runDir.run)) {
            return "; the run directory " + runDir.run + " could not be removed (rm -r " + runDir.run + ")";
        }
        removeSharedIfEmpty(runDir);
        return "; the run directory " + runDir.run + " was removed";
    }

    /** Removes the shared directory in the lock directory that verify made, if no other run uses it. */
    private void removeSharedIfEmpty(VerifyRunDir runDir) {
        Path shared = runDir.run.getParent();
        if (!sharedDirGiven && shared.getFileName().toString().equals(VerifyCommand.SHARED_IN_LOCK_DIR)) {
            try {
                Files.deleteIfExists(shared); // only if empty: another run may be using it
            } catch (IOException e) {
                // not empty, or not ours to remove
            }
        }
    }
}
