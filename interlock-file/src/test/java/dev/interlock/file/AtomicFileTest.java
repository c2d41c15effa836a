package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.interlock.Interlock;
import dev.interlock.Lease;
import dev.interlock.LockSpace;
import dev.interlock.file.AtomicFileException.Reason;
import dev.interlock.file.internal.ReplaceTarget;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AtomicFile}: the replacement keeps owner and mode and leaves nothing behind; what cannot
 * be replaced is refused with the file intact; a lease that is no longer valid at the moment of
 * the write, and a token older than the file's, are refused.
 */
class AtomicFileTest {
    @TempDir
    Path tmp;

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private List<String> temps() throws Exception {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith(ReplaceTarget.TEMP_PREFIX))
                    .toList();
        }
    }

    private static Process run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        p.waitFor();
        return p;
    }

    @Test
    void write_thenRead_keepsModeAndOwner_leavesNoTemporaryFile() throws Exception {
        Path f = tmp.resolve("f");
        AtomicFile file = AtomicFile.of(f);
        assertThat(file.read()).isEmpty();
        file.write(bytes("one\n"));
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r-----"));
        Files.setAttribute(f, "unix:gid", 12345);
        file.write(bytes("two\n"));
        assertThat(text(file.read().orElseThrow())).isEqualTo("two\n");
        assertThat(Files.getPosixFilePermissions(f)).isEqualTo(PosixFilePermissions.fromString("rw-r-----"));
        assertThat(Files.getAttribute(f, "unix:gid")).isEqualTo(12345);
        assertThat(temps()).isEmpty();
        assertThat(file.fence()).isEmpty();
    }

    @Test
    void update_underALease_appliesTheChange_andNullLeavesTheFile() throws Exception {
        Path f = tmp.resolve("counter");
        AtomicFile file = AtomicFile.of(f);
        try (LockSpace locks = Interlock.open("mem:update");
                Lease lease = locks.acquire("counter", Duration.ofSeconds(5))) {
            assertThat(text(file.update(
                            lease,
                            old -> bytes((old.length == 0
                                            ? 0
                                            : Integer.parseInt(text(old).trim())) + 1 + "\n"))))
                    .isEqualTo("1\n");
            assertThat(text(file.update(lease, old -> null))).isEqualTo("1\n");
        }
        assertThat(Files.readString(f)).isEqualTo("1\n");
    }

    /** The lease is checked at the moment of the write, after the change was made: not only when the update starts. */
    @Test
    void update_leaseLostWhileTheChangeIsMade_isRefused_fileUnchanged() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old\n");
        try (LockSpace locks = Interlock.open("mem:lost")) {
            Lease lease = locks.acquire("f", Duration.ofSeconds(5));
            assertThatThrownBy(() -> AtomicFile.of(f).update(lease, old -> {
                        lease.close(); // the lock goes while the new content is being made
                        return bytes("new\n");
                    }))
                    .isInstanceOfSatisfying(
                            AtomicFileException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.LEASE_NOT_VALID))
                    .hasMessageContaining("the lease on f")
                    .hasMessageContaining("is no longer valid")
                    .hasMessageContaining("is unchanged");
        }
        assertThat(Files.readString(f)).isEqualTo("old\n");
        assertThat(temps()).isEmpty();
    }

    @Test
    void fencedWrite_olderTokenAfterNewer_isRefusedNamingBoth_equalPasses_unfencedKeepsTheToken() throws Exception {
        Path f = tmp.resolve("f");
        AtomicFile file = AtomicFile.of(f);
        file.write(bytes("by 7\n"), 7);
        assertThat(file.fence()).isEqualTo(OptionalLong.of(7));
        assertThatThrownBy(() -> file.write(bytes("by 6\n"), 6))
                .isInstanceOfSatisfying(FencedWriteException.class, e -> {
                    assertThat(e.attemptedToken()).isEqualTo(6);
                    assertThat(e.currentToken()).isEqualTo(7);
                    assertThat(e.reason()).isEqualTo(Reason.FENCED);
                })
                .hasMessageContaining("fencing token 6")
                .hasMessageContaining("token 7 already landed")
                .hasMessageContaining("is unchanged");
        assertThat(Files.readString(f)).isEqualTo("by 7\n");
        file.write(bytes("by 7 again\n"), 7);
        file.write(bytes("unfenced\n"));
        assertThat(file.fence()).isEqualTo(OptionalLong.of(7));
        assertThatThrownBy(() -> file.write(bytes("by 3\n"), 3)).isInstanceOf(FencedWriteException.class);
        file.write(bytes("by 8\n"), 8);
        assertThat(Files.readString(f)).isEqualTo("by 8\n");
        assertThat(temps()).isEmpty();
        // The documented format: ASCII decimal, no NUL, readable by any language.
        UserDefinedFileAttributeView view = Files.getFileAttributeView(f, UserDefinedFileAttributeView.class);
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(64);
        view.read("interlock.fence", buf);
        assertThat(new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII))
                .isEqualTo("8");
    }

    @Test
    void updateFenced_usesTheLeaseToken_andAStaleLeaseIsRefusedAfterANewerWrite() throws Exception {
        Path f = tmp.resolve("f");
        AtomicFile file = AtomicFile.of(f);
        try (LockSpace locks = Interlock.open("mem:fenced")) {
            Lease stale = locks.acquire("job", Duration.ofSeconds(5));
            // The stale holder's lock is broken (as a lease running out would); a newer holder writes.
            assertThat(locks.breakLock("job", stale.owner().id())).isTrue();
            try (Lease newer = locks.acquire("job", Duration.ofSeconds(5))) {
                assertThat(newer.token()).isGreaterThan(stale.token());
                file.updateFenced(newer, old -> bytes("newer\n"));
            }
            assertThatThrownBy(() -> file.updateFenced(stale, old -> bytes("stale\n")))
                    .isInstanceOf(FencedWriteException.class);
            stale.close();
        }
        assertThat(Files.readString(f)).isEqualTo("newer\n");
    }

    /** A fence attribute that is not a token is not trusted: fenced writes fail closed. */
    @Test
    void aDamagedFenceAttribute_refusesFencedWrites() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "x\n");
        Files.getFileAttributeView(f, UserDefinedFileAttributeView.class)
                .write("interlock.fence", java.nio.ByteBuffer.wrap(bytes("-1")));
        assertThatThrownBy(() -> AtomicFile.of(f).write(bytes("y\n"), 100))
                .isInstanceOf(AtomicFileException.class)
                .hasMessageContaining("that is not a token")
                .hasMessageContaining("\"-1\"")
                .hasMessageContaining("is unchanged");
        assertThat(Files.readString(f)).isEqualTo("x\n");
    }

    @Test
    void parallelUpdates_underOneLock_loseNothing() throws Exception {
        Path f = tmp.resolve("counter");
        Path locksDir = Files.createDirectory(tmp.resolve("locks"));
        AtomicFile file = AtomicFile.of(f);
        int threads = 4;
        int each = 50;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (LockSpace locks = Interlock.open("flock:" + locksDir)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    for (int i = 0; i < each; i++) {
                        file.update(
                                locks,
                                "counter",
                                Duration.ofSeconds(30),
                                old -> bytes((old.length == 0
                                                ? 0
                                                : Integer.parseInt(text(old).trim())) + 1 + "\n"));
                    }
                    return null;
                }));
            }
            for (Future<?> d : done) {
                d.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(Files.readString(f)).isEqualTo(threads * each + "\n");
        assertThat(temps()).isEmpty();
    }

    @Test
    void directory_isRefused() throws Exception {
        Path d = Files.createDirectory(tmp.resolve("d"));
        assertRefused(d, "is a directory");
        assertRefused(d.resolve(".."), "is a directory");
        assertRefused(Path.of(d + "/"), "is a directory");
    }

    @Test
    void fifo_isRefused_withoutHanging() throws Exception {
        Path fifo = tmp.resolve("fifo");
        assumeTrue(run("mkfifo", fifo.toString()).exitValue() == 0, "mkfifo");
        assertRefused(fifo, "is a FIFO (named pipe), not a regular file");
        assertThat(Files.isRegularFile(fifo, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void device_isRefused() throws Exception {
        Path dev = tmp.resolve("null");
        assumeTrue(run("mknod", dev.toString(), "c", "1", "3").exitValue() == 0, "mknod is not permitted here");
        assertRefused(dev, "is a character device, not a regular file");
        assertThat(Files.isRegularFile(dev, LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void socket_isRefused() throws Exception {
        Path sock = tmp.resolve("sock");
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(sock));
            assertRefused(sock, "is a socket, not a regular file");
        }
    }

    /** Links are refused, not followed; the message names what to pass instead. The target is untouched. */
    @Test
    void symlink_isRefused_targetUntouched() throws Exception {
        Path victim = Files.writeString(tmp.resolve("victim"), "victim\n");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), victim);
        assertRefused(link, "is a symbolic link to " + victim, "pass the path it points to, " + victim);
        assertThat(Files.readString(victim)).isEqualTo("victim\n");
        assertThat(Files.isSymbolicLink(link)).isTrue();
        assertThatThrownBy(() -> AtomicFile.of(link).write(bytes("x"), 5)).isInstanceOf(AtomicFileException.class);
        assertThat(AtomicFile.of(victim).fence()).isEmpty();
    }

    @Test
    void missingDirectory_saysCreateItFirst() {
        assertRefused(tmp.resolve("no/such"), "does not exist; create it first");
    }

    private void assertRefused(Path p, String... says) {
        for (AtomicFileTestOp op :
                new AtomicFileTestOp[] {f -> f.write(bytes("x\n")), f -> f.write(bytes("x\n"), 1), f -> f.read()}) {
            assertThatThrownBy(() -> op.run(AtomicFile.of(p)))
                    .isInstanceOfSatisfying(
                            AtomicFileException.class,
                            e -> assertThat(e.reason()).isEqualTo(Reason.BAD_PATH))
                    .hasMessageContainingAll(says)
                    .hasMessageNotContaining("Exception");
        }
    }

    @FunctionalInterface
    private interface AtomicFileTestOp {
        void run(AtomicFile f) throws Exception;
    }

    /** A temporary file of a live writer is never removed by another writer; a dead writer's is. */
    @Test
    void leftovers_onlyDeadWritersFilesAreRemoved() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old\n");
        try (ReplaceTarget live = ReplaceTarget.open(f)) {
            ReplaceTarget.Temp mine = live.createTemp(null);
            try {
                AtomicFile.of(f)
                        .write(bytes("other\n")); // another writer (another lock name, or none): cleans up first
                assertThat(temps()).containsExactly(mine.shown());
                assertThat(live.commit(mine, -1, null)).isTrue();
            } finally {
                dev.interlock.file.internal.LibcFiles.close(mine.fd());
            }
        }
        assertThat(Files.readString(f)).isEmpty(); // the live writer's (empty) content landed last
        Path dead;
        try (ReplaceTarget crashed = ReplaceTarget.open(f)) {
            ReplaceTarget.Temp left = crashed.createTemp(null);
            dead = tmp.resolve(left.shown());
            dev.interlock.file.internal.LibcFiles.close(left.fd()); // as the kernel does when its writer dies
        }
        assertThat(dead).exists();
        AtomicFile.of(f).write(bytes("next\n"));
        assertThat(dead).doesNotExist();
        assertThat(temps()).isEmpty();
    }

    /**
     * Issue 32: a holder cut off from an NFS server by a hard mount has its rename sent again when
     * the link returns, after the next holder wrote. A newer fenced commit withdraws an older
     * holder's prepared write (its temporary file, fenced with a smaller token, its writer alive),
     * so that rename finds no such name and the server refuses it; the older holder, if it goes on,
     * is refused as fenced. Temporary files with no token or a newer one are left alone.
     */
    @Test
    void fencedCommit_withdrawsAnOlderHoldersPreparedWrite_soItsLateRenameIsRefused() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "old\n");
        try (ReplaceTarget stale = ReplaceTarget.open(f);
                ReplaceTarget unfenced = ReplaceTarget.open(f);
                ReplaceTarget newest = ReplaceTarget.open(f)) {
            ReplaceTarget.Temp six = stale.createTemp(null);
            ReplaceTarget.Temp none = unfenced.createTemp(null);
            ReplaceTarget.Temp eight = newest.createTemp(null);
            try {
                stale.write(six, bytes("from token 6\n"));
                stale.setFence(six, 6);
                newest.setFence(eight, 8);
                Path sixPath = tmp.resolve(six.shown());

                AtomicFile.of(f).write(bytes("from token 7\n"), 7);

                assertThat(sixPath).as("the older holder's write is withdrawn").doesNotExist();
                assertThat(temps()).containsExactlyInAnyOrder(none.shown(), eight.shown());
                assertThatThrownBy(() -> Files.move(sixPath, f, java.nio.file.StandardCopyOption.ATOMIC_MOVE))
                        .as("its late rename")
                        .isInstanceOf(java.nio.file.NoSuchFileException.class);
                assertThatThrownBy(() -> stale.commit(six, 6, null))
                        .isInstanceOfSatisfying(
                                FencedWriteException.class,
                                e -> assertThat(e.currentToken()).isEqualTo(7));
                assertThat(Files.readString(f)).isEqualTo("from token 7\n");
            } finally {
                dev.interlock.file.internal.LibcFiles.close(six.fd());
                unfenced.removeTemp(none);
                dev.interlock.file.internal.LibcFiles.close(none.fd());
                newest.removeTemp(eight);
                dev.interlock.file.internal.LibcFiles.close(eight.fd());
            }
        }
    }

    /**
     * Anyone who can read the directory can flock it ({@code flock -s DIR ...}): that used to
     * freeze every write in it forever. Now the write waits a bounded time for the gate and fails
     * naming the holder, with the file unchanged.
     */
    @Test
    void directoryFlockedByAnotherProcess_writeFailsInBoundedTime_namingTheHolder() throws Exception {
        Path f = tmp.resolve("conf");
        Files.writeString(f, "old\n");
        Process holder = new ProcessBuilder("flock", "-x", tmp.toString(), "sh", "-c", "echo ready; read x").start();
        String previous = System.setProperty("interlock.file.gateWaitMs", "300");
        try {
            assertThat(new String(holder.getInputStream().readNBytes(6), StandardCharsets.UTF_8))
                    .isEqualTo("ready\n");
            assertThatThrownBy(() -> org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                            Duration.ofSeconds(20), () -> AtomicFile.of(f).write(bytes("new\n"))))
                    .isInstanceOf(AtomicFileException.class)
                    .hasMessageContaining("locked with flock(2)")
                    .hasMessageContaining("(flock, user ")
                    .hasMessageContaining("is unchanged");
            assertThat(Files.readString(f)).isEqualTo("old\n");
            assertThat(temps()).isEmpty();
        } finally {
            if (previous == null) {
                System.clearProperty("interlock.file.gateWaitMs");
            } else {
                System.setProperty("interlock.file.gateWaitMs", previous);
            }
            holder.getOutputStream().close();
            holder.waitFor();
        }
        AtomicFile.of(f).write(bytes("new\n")); // once it is free, the write goes through
        assertThat(Files.readString(f)).isEqualTo("new\n");
    }
}
