package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The same calls give the same results and the same errno on every path this JDK has: JNA always
 * (registered, and called without registration as the command-line tool does), FFM too on JDK 22+
 * with the multi-release jar. Arrays in, arrays out (only as far as the call
 * wrote), two paths in one call, struct pollfd written back, errno per call.
 */
class NativesTest {
    @TempDir
    Path tmp;

    static Stream<Natives> paths() {
        List<Natives> out = new ArrayList<>();
        out.add(Libc.select("jna"));
        out.add(Libc.select("jna-call"));
        Natives chosen = Libc.select("");
        if (!chosen.name().equals("jna")) {
            out.add(chosen);
        }
        return out.stream();
    }

    private static byte[] c(Path p) {
        return LibcFiles.path(p);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void errno_isThatOfTheLastCall(Natives n) {
        Natives.Files f = n.files();
        assertThat(f.close(-1)).isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.EBADF);
        assertThat(f.openat(LibcFiles.AT_FDCWD, LibcFiles.cstring("/nonexistent/x"), LibcFiles.O_RDONLY, 0))
                .isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.ENOENT);
        n.errno(Errno.EINTR);
        assertThat(n.errno()).isEqualTo(Errno.EINTR);
        assertThat(n.strerror(Errno.EACCES)).isNotEmpty();
        assertThat(n.errno()).as("describing an error keeps it").isEqualTo(Errno.EINTR);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void files_readWriteStatRenameLinkList(Natives n) throws Exception {
        Natives.Files f = n.files();
        Path a = tmp.resolve("a");
        int fd = f.openat(
                LibcFiles.AT_FDCWD,
                c(a),
                LibcFiles.O_RDWR | LibcFiles.O_CREAT | LibcFiles.O_EXCL | LibcFiles.O_CLOEXEC,
                0640);
        assertThat(fd).as(Errno.describe(n.errno())).isNotNegative();
        byte[] hello = "hello world".getBytes(StandardCharsets.US_ASCII);
        assertThat(f.write(fd, hello, 5)).isEqualTo(5);
        assertThat(f.pwrite(fd, hello, hello.length, 5)).isEqualTo(hello.length);
        byte[] back = new byte[32];
        back[31] = 42;
        assertThat(f.pread(fd, back, 32, 0)).isEqualTo(16);
        assertThat(new String(back, 0, 16, StandardCharsets.US_ASCII)).isEqualTo("hellohello world");
        assertThat(back[31]).as("not written past what was read").isEqualTo((byte) 42);
        byte[] st = new byte[256];
        assertThat(f.statx(fd, LibcFiles.EMPTY_PATH, LibcFiles.AT_EMPTY_PATH, LibcFiles.STATX_BASIC_STATS, st))
                .isZero();
        assertThat(LibcFiles.getInt(st, 40)).isEqualTo(16); // stx_size
        assertThat(f.flock(fd, LibcFiles.LOCK_EX | LibcFiles.LOCK_NB)).isZero();
        assertThat(f.fchown(fd, -1, -1)).as("(uid_t) -1: unchanged").isZero();
        assertThat(f.fcntl(fd, LibcFiles.F_GETFL, 0) & LibcFiles.O_RDWR).isEqualTo(LibcFiles.O_RDWR);
        assertThat(f.ftruncate(fd, 3)).isZero();
        assertThat(f.fsync(fd)).isZero();
        assertThat(f.close(fd)).isZero();
        assertThat(Files.readString(a)).isEqualTo("hel");

        assertThat(f.renameat(
                        LibcFiles.AT_FDCWD, c(a), LibcFiles.AT_FDCWD, c(tmp.resolve("a-much-longer-second-name"))))
                .isZero();
        assertThat(f.linkat(
                        LibcFiles.AT_FDCWD,
                        c(tmp.resolve("a-much-longer-second-name")),
                        LibcFiles.AT_FDCWD,
                        c(tmp.resolve("b")),
                        0))
                .isZero();
        assertThat(f.mkdirat(LibcFiles.AT_FDCWD, c(tmp.resolve("d")), 0700)).isZero();
        assertThat(f.mkdirat(LibcFiles.AT_FDCWD, c(tmp.resolve("d")), 0700)).isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.EEXIST);
        Files.createSymbolicLink(tmp.resolve("l"), Path.of("some/target"));
        byte[] link = new byte[64];
        long len = f.readlinkat(LibcFiles.AT_FDCWD, c(tmp.resolve("l")), link, link.length);
        assertThat(new String(link, 0, (int) len, StandardCharsets.US_ASCII)).isEqualTo("some/target");
        assertThat(f.unlinkat(LibcFiles.AT_FDCWD, c(tmp.resolve("b")), 0)).isZero();
        assertThat(f.faccessat(LibcFiles.AT_FDCWD, c(tmp.resolve("b")), LibcFiles.W_OK, 0))
                .isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.ENOENT);

        int dir = f.openat(
                LibcFiles.AT_FDCWD, c(tmp), LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY | LibcFiles.O_CLOEXEC, 0);
        byte[] dents = new byte[LibcFiles.DENTS_SIZE];
        long got = f.getdents64(dir, dents);
        assertThat(got).isPositive();
        assertThat(new String(dents, 0, (int) got, StandardCharsets.ISO_8859_1))
                .contains("a-much-longer-second-name")
                .contains("l\0");
        f.close(dir);
        assertThat(f.geteuid()).isEqualTo(LibcFiles.geteuid());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void eventfd_andPoll(Natives n) {
        Natives.Events e = n.events();
        Natives.Files f = n.files();
        assertThat(e.eventfd(0, -1)).isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.EINVAL);
        int efd = e.eventfd(0, LibcEvents.EFD_CLOEXEC | LibcEvents.EFD_NONBLOCK);
        assertThat(efd).as(Errno.describe(n.errno())).isNotNegative();
        try {
            ByteBuffer pfd = ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
            pfd.putInt(0, efd).putShort(4, (short) LibcEvents.POLLIN).putShort(6, (short) 0x7777);
            pfd.putInt(8, -1).putShort(12, (short) LibcEvents.POLLIN).putShort(14, (short) 0x7777);
            byte[] fds = pfd.array();
            assertThat(e.poll(fds, 2, 0)).isZero();
            assertThat(ByteBuffer.wrap(fds).order(ByteOrder.nativeOrder()).getShort(6))
                    .as("revents written back")
                    .isZero();
            byte[] one = ByteBuffer.allocate(8)
                    .order(ByteOrder.nativeOrder())
                    .putLong(0, 1)
                    .array();
            assertThat(f.write(efd, one, 8)).isEqualTo(8);
            assertThat(e.poll(fds, 2, 1000)).isEqualTo(1);
            ByteBuffer r = ByteBuffer.wrap(fds).order(ByteOrder.nativeOrder());
            assertThat(r.getShort(6)).isEqualTo((short) LibcEvents.POLLIN);
            assertThat(r.getShort(14)).as("a negative fd is ignored").isZero();
            byte[] count = new byte[8];
            assertThat(f.read(efd, count, 8)).isEqualTo(8);
            assertThat(ByteBuffer.wrap(count).order(ByteOrder.nativeOrder()).getLong(0))
                    .isEqualTo(1);
            assertThat(f.read(efd, count, 8)).isEqualTo(-1);
            assertThat(n.errno()).isEqualTo(Errno.EAGAIN);
        } finally {
            f.close(efd);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void inotify(Natives n) throws Exception {
        Natives.Events e = n.events();
        int fd = e.inotify_init1(LibcEvents.IN_CLOEXEC | LibcEvents.IN_NONBLOCK);
        assertThat(fd).isNotNegative();
        try {
            int wd = e.inotify_add_watch(fd, c(tmp), LibcEvents.IN_CREATE);
            assertThat(wd).isNotNegative();
            Files.writeString(tmp.resolve("new"), "x");
            byte[] ev = new byte[4096];
            long len = n.files().read(fd, ev, ev.length);
            assertThat(len).isGreaterThan(16);
            assertThat(new String(ev, 16, (int) len - 16, StandardCharsets.US_ASCII))
                    .startsWith("new");
            assertThat(e.inotify_rm_watch(fd, wd)).isZero();
        } finally {
            n.files().close(fd);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("paths")
    void processes_pipeAndPids(Natives n) {
        Natives.Processes p = n.processes();
        int[] fds = {-7, -7};
        assertThat(p.pipe2(fds, LibcFiles.O_CLOEXEC)).isZero();
        assertThat(fds[0]).isNotNegative();
        assertThat(fds[1]).isNotNegative().isNotEqualTo(fds[0]);
        n.files().close(fds[0]);
        n.files().close(fds[1]);
        assertThat(p.getpid()).isEqualTo((int) ProcessHandle.current().pid());
        assertThat(p.kill(p.getpid(), 0)).isZero();
        assertThat(p.waitpid(-1, new int[1], 1 /* WNOHANG */)).isEqualTo(-1);
        assertThat(n.errno()).isEqualTo(Errno.ECHILD);
        assertThat(p.getpgrp()).isPositive();
        assertThat(p.environ()).isNotNull();
    }
}
