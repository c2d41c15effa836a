package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.Owner;
import dev.interlock.spi.AcquireSpec;
import dev.interlock.spi.Attempt;
import dev.interlock.spi.support.Spaces;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code flock:} and {@code dir:} lock space of a process shares one inotify instance. The
 * kernel allows 128 instances per user by default ({@code fs.inotify.max_user_instances}), across
 * all of that user's processes: with one instance per space, a process with a few hundred spaces
 * ran out, and the waiters of the spaces past the limit silently fell back to polling.
 */
class ManySpacesInotifyTest {
    private static final int SPACES_PER_BACKEND = 150;

    @TempDir
    Path tmp;

    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    @Test
    void threeHundredSpacesWithWaiters_useOneInotifyInstance() throws Exception {
        long before = inotifyInstances();
        for (int i = 0; i < SPACES_PER_BACKEND; i++) {
            waitIn("flock:" + Files.createDirectory(tmp.resolve("flock-" + i)));
            waitIn("dir:" + tmp.resolve("dir-" + i));
        }
        long after = inotifyInstances();
        assertThat(after)
                .as(
                        "inotify instances of this JVM after %d lock spaces each made a waiter watch",
                        2 * SPACES_PER_BACKEND)
                .isBetween(1L, Math.max(before, 1L));
    }

    /** Opens a space, holds "x" in it, and starts a second attempt on "x" up to the point where it watches (its first await). */
    private void waitIn(String uri) throws InterruptedException {
        LockSpace space = Interlock.open(uri);
        open.add(space);
        Lease held = space.tryAcquire("x").orElseThrow();
        open.add(held);
        Attempt waiter = Spaces.backend(space)
                .attempt(new AcquireSpec("x", Mode.EXCLUSIVE, Owner.newAcquisition(), Duration.ofMinutes(1)));
        open.add(waiter);
        assertThat(waiter.tryAcquire())
                .as("%s: a second acquisition of a held lock", uri)
                .isEmpty();
        waiter.await(0); // the first wait starts watching and returns at once
    }

    /** Descriptors of this process that are inotify instances. */
    static long inotifyInstances() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                        try {
                            return Files.readSymbolicLink(fd).toString().equals("anon_inode:inotify");
                        } catch (IOException e) {
                            return false; // the descriptor of the listing itself, closed by now
                        }
                    })
                    .count();
        }
    }
}
