package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The append recipe of docs/fencing.md ("A holder cut off from an NFS server"), run as written:
 * one file per holder, named by {@code INTERLOCK_TOKEN}. On a hard NFS mount a cut-off holder's
 * buffered write reaches the server after the next holder's, at the offset it was written at
 * (issue 32); here that late write-back is made by hand, at the same offset.
 */
class SegmentPerHolderRecipeTest {
    @TempDir
    Path tmp;

    @Test
    void aLateWriteBack_landsInTheStaleHoldersOwnFile_andTheNextHoldersRecordsStay() throws Exception {
        Path locks = tmp.resolve("locks");
        Path log = Files.createDirectory(tmp.resolve("log.d"));
        String recipe = "set -C; printf '%s\\n' \"$0\" >\"" + log + "/$(printf %020d \"$INTERLOCK_TOKEN\")\"";
        for (String holder : List.of("a1", "b1")) {
            CliProcess p =
                    CliProcess.start("run", "--backend", "dir:" + locks, "job", "--", "sh", "-c", recipe, holder);
            assertThat(p.exitCode()).as(p.err()).isEqualTo(0);
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(log)) {
            files = s.sorted().toList();
        }
        assertThat(files).hasSize(2);
        assertThat(files.get(0).getFileName().toString()).matches("\\d{20}");
        assertThat(Files.readString(files.get(0))).isEqualTo("a1\n");

        lateWrite(files.get(0), 3, "a2\n"); // a's second line, buffered at offset 3 before its host was cut off

        StringBuilder read = new StringBuilder();
        for (Path f : files) {
            read.append(Files.readString(f));
        }
        assertThat(read).hasToString("a1\na2\nb1\n");

        // The same late write-back on one shared file: over the next holder's line.
        Path shared = Files.writeString(tmp.resolve("shared.log"), "a1\n");
        Files.writeString(shared, "b1\n", StandardOpenOption.APPEND);
        lateWrite(shared, 3, "a2\n");
        assertThat(Files.readString(shared)).isEqualTo("a1\na2\n");
    }

    private static void lateWrite(Path file, long offset, String text) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)), offset);
        }
    }
}
