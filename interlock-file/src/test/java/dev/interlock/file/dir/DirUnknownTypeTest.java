package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockSpace;
import dev.interlock.Mode;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.ErrnoException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.NativeFiles;
import dev.interlock.spi.support.Spaces;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Listings whose entries come without a type ({@code DT_UNKNOWN}, as from NFSv3 READDIR): the type
 * is read with lstat, and an entry whose type cannot be read is never ignored. An ignored
 * {@code R.} entry would let a writer in beside a reader; an entry renamed between the readdir
 * and the lstat (a heartbeat, a waiter renewing) is simply gone, not foreign.
 */
class DirUnknownTypeTest {
    @TempDir
    Path root;

    private LockSpace locks;

    @BeforeEach
    void open() {
        locks = Interlock.open("dir:" + root);
    }

    @AfterEach
    void close() {
        DirLockDir.entrySource = DirLockDir.SYSTEM;
        locks.close();
    }

    /** Every entry is listed as DT_UNKNOWN; lstat of a name that {@code failing} matches fails with {@code errno} (-1: ENOENT, as if renamed). */
    private static void unknownTypes(Predicate<String> failing, int errno) {
        DirLockDir.entrySource = new DirLockDir.EntrySource() {
            @Override
            public List<NativeFiles.Entry> list(int dirfd) {
                return NativeFiles.list(dirfd).stream()
                        .map(e -> new NativeFiles.Entry(e.name(), LibcFiles.DT_UNKNOWN))
                        .toList();
            }

            @Override
            public int lstatMode(int dirfd, String entry) {
                if (failing.test(entry)) {
                    if (errno == -1) {
                        return -1;
                    }
                    throw new ErrnoException(errno);
                }
                return NativeFiles.lstatMode(dirfd, entry);
            }
        };
    }

    private List<String> entries(String name) throws Exception {
        try (Stream<Path> s = Files.list(root.resolve(name))) {
            return s.map(p -> p.getFileName().toString()).toList();
        }
    }

    @Test
    void unknownTypes_readByLstat_workAsUsual() {
        unknownTypes(n -> false, 0);
        try (Lease r = locks.tryAcquire("job", Mode.SHARED).orElseThrow()) {
            assertThat(locks.tryAcquire("job")).as("a writer beside a reader").isEmpty();
            assertThat(locks.status("job").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.mode()).isEqualTo(Mode.SHARED));
        }
        locks.tryAcquire("job").orElseThrow().close();
    }

    @Test
    void readerEntryWhoseTypeCannotBeRead_failsTheListing_andNoWriterGetsIn() throws Exception {
        Lease reader = locks.tryAcquire("job", Mode.SHARED).orElseThrow();
        for (int errno : new int[] {Errno.EIO, Errno.EACCES}) {
            unknownTypes(n -> n.startsWith("R."), errno);
            assertThatThrownBy(() -> locks.tryAcquire("job"))
                    .isInstanceOf(LockBackendException.class)
                    .hasMessageContaining("'job'")
                    .hasMessageContaining("R." + reader.token() + ".");
            DirLockDir.entrySource = DirLockDir.SYSTEM;
            assertThat(entries("job")).as("the writer handed the gate back").anyMatch(n -> n.startsWith("F."));
            assertThat(locks.status("job").holders())
                    .singleElement()
                    .satisfies(h -> assertThat(h.mode()).isEqualTo(Mode.SHARED));
        }
        reader.renew();
        reader.close();
        locks.tryAcquire("job").orElseThrow().close();
    }

    @Test
    void entriesGoneBeforeTheirTypeIsRead_areSkipped_notReportedAsForeign() throws Exception {
        Lease reader = locks.tryAcquire("job", Mode.SHARED).orElseThrow();
        // A waiter's entry, and the reader's heartbeat, renamed between the readdir and the lstat.
        Files.createFile(root.resolve("job")
                .resolve(DirEntries.Waiter.name(
                        1,
                        1,
                        Mode.EXCLUSIVE,
                        false,
                        0,
                        new DirEntries.Holder(5_000, 1, 1, 1, 1, "feedface", "abcdef", "other-host"))));
        unknownTypes(n -> n.startsWith("Q.") || n.startsWith("B."), -1);
        DirLockBackend backend = (DirLockBackend) Spaces.backend(locks);
        try (DirLockDir dir = backend.openLockDir("job", false).orElseThrow()) {
            DirLockDir.Snapshot s = dir.list();
            assertThat(s.foreign).isEmpty();
            assertThat(s.waiters).isEmpty();
            assertThat(s.beats).isEmpty();
            assertThat(s.readers).hasSize(1);
            assertThat(s.gate()).isNotNull();
        }
        reader.close();
    }
}
