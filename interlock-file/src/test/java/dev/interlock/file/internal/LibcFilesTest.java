package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The binding on the architecture that runs the tests: flags whose values differ between x86-64
 * and aarch64 do what their names say, statx and getdents64 are read at the right offsets, and
 * errors read the same whatever the locale.
 */
class LibcFilesTest {
    @TempDir
    Path tmp;

    private static int open(Path p, int flags) {
        return LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.path(p), flags | LibcFiles.O_CLOEXEC, 0);
    }

    @Test
    void oDirectory_refusesAFile_andODirectoryOpensADirectory() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "x");
        assertThat(open(f, LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY)).isEqualTo(-1);
        assertThat(Errno.last()).as(Errno.describeLast()).isEqualTo(Errno.ENOTDIR);
        int fd = open(tmp, LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY);
        assertThat(fd).as(Errno.describeLast()).isNotNegative();
        LibcFiles.close(fd);
    }

    @Test
    void oNofollow_refusesALink() throws Exception {
        Path target = Files.writeString(tmp.resolve("target"), "x");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), target);
        assertThat(open(link, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW)).isEqualTo(-1);
        assertThat(Errno.last()).as(Errno.describeLast()).isEqualTo(Errno.ELOOP);
        int fd = open(target, LibcFiles.O_RDONLY | LibcFiles.O_NOFOLLOW);
        assertThat(fd).as(Errno.describeLast()).isNotNegative();
        LibcFiles.close(fd);
    }

    @Test
    void statx_readsWhatJavaSees() throws Exception {
        Path f = Files.writeString(tmp.resolve("f"), "hello");
        Files.createLink(tmp.resolve("second-name"), f);
        int fd = open(f, LibcFiles.O_RDONLY);
        try {
            LibcFiles.Statx st = LibcFiles.fstat(fd);
            assertThat(st).isNotNull();
            assertThat(st.ino()).isEqualTo(((Number) Files.getAttribute(f, "unix:ino")).longValue());
            assertThat(st.size()).isEqualTo(5);
            assertThat(st.nlink()).isEqualTo(2);
            assertThat(st.mode() & 07777).isEqualTo(((Number) Files.getAttribute(f, "unix:mode")).intValue() & 07777);
            assertThat(st.uid()).isEqualTo(((Number) Files.getAttribute(f, "unix:uid")).intValue());
            assertThat(st.isRegularFile()).isTrue();
            assertThat(st.sameFile(LibcFiles.statx(LibcFiles.AT_FDCWD, LibcFiles.path(tmp.resolve("second-name")), 0)))
                    .isTrue();
            assertThat(LibcFiles.lstatAt(LibcFiles.AT_FDCWD, LibcFiles.path(tmp))
                            .isDirectory())
                    .isTrue();
        } finally {
            LibcFiles.close(fd);
        }
    }

    @Test
    void readDirectory_listsNamesAndTypes() throws Exception {
        Files.createFile(tmp.resolve("a-file"));
        Files.createDirectory(tmp.resolve("a-dir"));
        Files.createSymbolicLink(tmp.resolve("a-link"), Path.of("nowhere"));
        Files.createFile(tmp.resolve("é-" + "x".repeat(200)));
        int fd = open(tmp, LibcFiles.O_RDONLY | LibcFiles.O_DIRECTORY);
        try {
            List<LibcFiles.DirEntry> entries = LibcFiles.readDirectory(fd);
            assertThat(entries).isNotNull();
            Map<String, Byte> byName = entries.stream()
                    .collect(Collectors.toMap(
                            e -> new String(e.name(), StandardCharsets.UTF_8), LibcFiles.DirEntry::type));
            assertThat(byName).containsOnlyKeys("a-file", "a-dir", "a-link", "é-" + "x".repeat(200));
            assertThat(byName.get("a-file")).isIn(LibcFiles.DT_REG, LibcFiles.DT_UNKNOWN);
            assertThat(byName.get("a-dir")).isIn(LibcFiles.DT_DIR, LibcFiles.DT_UNKNOWN);
            assertThat(byName.get("a-link")).isIn(LibcFiles.DT_LNK, LibcFiles.DT_UNKNOWN);
        } finally {
            LibcFiles.close(fd);
        }
    }

    @Test
    void errors_readAsTextAndName() {
        assertThat(Errno.describe(Errno.EACCES)).isEqualTo("permission denied (EACCES)");
        assertThat(Errno.describe(Errno.ENOENT)).isEqualTo("no such file or directory (ENOENT)");
        assertThat(Errno.describe(Errno.ESTALE)).isEqualTo("stale file handle (ESTALE)");
        assertThat(Errno.describe(71)).endsWith("(errno 71)").doesNotContain("Exception");
        assertThat(new ErrnoException(Errno.ELOOP).getMessage()).isEqualTo("too many levels of symbolic links (ELOOP)");
        assertThat(LibcFiles.openat(LibcFiles.AT_FDCWD, LibcFiles.path(tmp.resolve("missing")), LibcFiles.O_RDONLY, 0))
                .isEqualTo(-1);
        assertThat(Errno.describeLast()).isEqualTo("no such file or directory (ENOENT)");
    }
}
