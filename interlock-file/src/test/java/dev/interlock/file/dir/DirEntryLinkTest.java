package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A permit's entry and a reader's entry are second names of the heartbeat just created (one
 * inode per holder, not two; docs/dir-protocol.md 4.3 and 4.8): the directory's names, which are
 * all anyone reads, are those of an entry created on its own, and the file system allocates and
 * frees half as many inodes per share.
 */
class DirEntryLinkTest {
    @TempDir
    Path dir;

    private LockSpace space;

    @AfterEach
    void close() {
        DirFaults.onStep = null;
        if (space != null) {
            space.close();
        }
    }

    private List<Path> entries(String name) throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve(DirNames.encode(name)))) {
            return s.sorted().toList();
        }
    }

    private Path one(String name, String prefix) throws Exception {
        return entries(name).stream()
                .filter(p -> p.getFileName().toString().startsWith(prefix))
                .reduce((a, b) -> {
                    throw new AssertionError("two " + prefix + " entries: " + a + ", " + b);
                })
                .orElseThrow(() -> new AssertionError("no " + prefix + " entry"));
    }

    private static long inode(Path p) throws Exception {
        return ((Number) Files.getAttribute(p, "unix:ino")).longValue();
    }

    private void assertSecondNameOfItsHeartbeat(String name, String entryPrefix) throws Exception {
        Path beat = one(name, "B.");
        Path entry = one(name, entryPrefix);
        assertThat(inode(entry)).as("the entry is its heartbeat's inode").isEqualTo(inode(beat));
        assertThat(Files.getAttribute(entry, "unix:nlink")).isEqualTo(2);
        assertThat(Files.isRegularFile(entry, java.nio.file.LinkOption.NOFOLLOW_LINKS))
                .isTrue();
    }

    @Test
    void aPermitsEntry_isASecondNameOfItsHeartbeat_andBothGoAtRelease() throws Exception {
        space = Interlock.open("dir:" + dir);
        Lease permit = space.lock("gpu").limit(2).tryAcquire().orElseThrow();
        assertSecondNameOfItsHeartbeat("gpu", "P.");
        permit.renew(); // the heartbeat's rename leaves the entry where others count it
        assertThat(one("gpu", "P.")).exists();
        assertThat(space.status("gpu").holders()).hasSize(1);
        permit.close();
        assertThat(entries("gpu"))
                .extracting(p -> p.getFileName().toString().substring(0, 2))
                .containsExactlyInAnyOrder("F.", "na");
    }

    @Test
    void aReadersEntry_isASecondNameOfItsHeartbeat() throws Exception {
        space = Interlock.open("dir:" + dir);
        Lease reader = space.tryAcquire("report", Mode.SHARED).orElseThrow();
        assertSecondNameOfItsHeartbeat("report", "R.");
        reader.close();
        assertThat(entries("report"))
                .extracting(p -> p.getFileName().toString().substring(0, 2))
                .containsExactlyInAnyOrder("F.", "na");
    }

    @Test
    void aHeartbeatRemovedBeforeItsEntryIsLinked_grantsNothing_andLeavesNothing() throws Exception {
        space = Interlock.open("dir:" + dir);
        space.tryAcquire("report", Mode.SHARED).orElseThrow().close(); // the lock directory exists
        // As if this reader were paused for a whole lease right after creating its heartbeat, and
        // another host removed the heartbeat as stale.
        DirFaults.onStep = step -> {
            if (step.equals("S2")) {
                DirFaults.onStep = null;
                try (Stream<Path> s = Files.list(dir.resolve("report"))) {
                    for (Path p : s.filter(p -> p.getFileName().toString().startsWith("B."))
                            .toList()) {
                        Files.delete(p);
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
        };
        assertThat(space.tryAcquire("report", Mode.SHARED)).isEmpty();
        assertThat(entries("report"))
                .extracting(p -> p.getFileName().toString().substring(0, 2))
                .containsExactlyInAnyOrder("F.", "na");
        assertThat(space.tryAcquire("report", Mode.SHARED))
                .as("the next try is granted")
                .isPresent();
    }
}
