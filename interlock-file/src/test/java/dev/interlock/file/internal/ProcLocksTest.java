package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Mode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reading who holds a flock(2) lock from /proc/locks. */
class ProcLocksTest {
    @TempDir
    Path tmp;

    @Test
    void fields_areSplitAtRunsOfBlanks() {
        assertThat(ProcLocks.fields("1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF"))
                .containsExactly("1:", "FLOCK", "ADVISORY", "WRITE", "4242", "08:01:1234", "0", "EOF");
        assertThat(ProcLocks.fields(" 2: -> FLOCK\tADVISORY READ 7 00:2a:99 0 EOF "))
                .containsExactly("2:", "->", "FLOCK", "ADVISORY", "READ", "7", "00:2a:99", "0", "EOF");
        assertThat(ProcLocks.fields("   ")).isEmpty();
    }

    /** One reading for many inodes (a semaphore's slots), the same entries as one flocksOn per inode. */
    @Test
    void flocksByInode_groupsTheFlocksOfTheDevices_andSkipsTheRest() {
        String text = "1: FLOCK  ADVISORY  WRITE 11 08:01:100 0 EOF\n"
                + "2: FLOCK  ADVISORY  WRITE 12 08:01:101 0 EOF\n"
                + "2: -> FLOCK  ADVISORY  WRITE 13 08:01:101 0 EOF\n"
                + "3: POSIX  ADVISORY  WRITE 14 08:01:102 0 EOF\n"
                + "4: FLOCK  ADVISORY  READ 15 08:02:100 0 EOF\n";
        long[] sda1 = {NfsMountDevices.device(8, 1)};
        var byInode = ProcLocks.flocksByInode(sda1, text);
        assertThat(byInode).containsOnlyKeys(100L, 101L);
        assertThat(byInode.get(100L)).containsExactly(new ProcLocks.Entry(Mode.EXCLUSIVE, 11, false));
        assertThat(byInode.get(101L))
                .containsExactly(
                        new ProcLocks.Entry(Mode.EXCLUSIVE, 12, false), new ProcLocks.Entry(Mode.EXCLUSIVE, 13, true));
        assertThat(byInode.get(101L)).isEqualTo(ProcLocks.flocksOn(sda1, 101, text));
    }

    @Test
    void lines_splitAtLineEnds_withOrWithoutALastOne() {
        assertThat(ProcLocks.lines("a\nb c\n")).containsExactly("a", "b c");
        assertThat(ProcLocks.lines("a\n\nb")).containsExactly("a", "", "b");
        assertThat(ProcLocks.lines("")).isEmpty();
    }

    @Test
    void aLongProcLocks_isReadToItsEnd() throws Exception {
        // 800 locks of this process: /proc/locks is then longer than 32 KiB, more than one read,
        // and the lock taken last is listed last (the kernel appends).
        List<java.nio.channels.FileChannel> held = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 800; i++) {
                java.nio.channels.FileChannel c = java.nio.channels.FileChannel.open(
                        tmp.resolve("l" + i),
                        java.nio.file.StandardOpenOption.CREATE,
                        java.nio.file.StandardOpenOption.WRITE);
                held.add(c);
                assertThat(c.tryLock()).isNotNull(); // fcntl locks: listed as POSIX, skipped by flocksOn
            }
            String text = ProcLocksFile.read();
            assertThat(text.length()).isGreaterThan(2 * 16384);
            assertThat(ProcLocks.lines(text)).hasSizeGreaterThanOrEqualTo(800);
            Path last = tmp.resolve("l799");
            long ino = (Long) Files.getAttribute(last, "unix:ino");
            assertThat(text).contains(":" + ino + " ");
        } finally {
            for (java.nio.channels.FileChannel c : held) {
                c.close();
            }
        }
    }

    @Test
    void aLockHeldByFlock1_isFoundWithItsPidAndMode() throws Exception {
        Path file = Files.createFile(tmp.resolve("f"));
        long dev = (Long) Files.getAttribute(file, "unix:dev");
        long ino = (Long) Files.getAttribute(file, "unix:ino");
        int major = (int) (((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL));
        int minor = (int) ((dev & 0xff) | ((dev >>> 12) & ~0xffL));
        Process holder = new ProcessBuilder("flock", "-x", file.toString(), "sh", "-c", "echo held; read x").start();
        try {
            assertThat(new String(holder.getInputStream().readNBytes(5))).isEqualTo("held\n");
            List<ProcLocks.Entry> found = ProcLocks.flocksOn(major, minor, ino);
            assertThat(found).extracting(ProcLocks.Entry::mode).containsExactly(Mode.EXCLUSIVE);
            assertThat(found.get(0).waiting()).isFalse();
            assertThat(found.get(0).pid()).isPositive();
        } finally {
            holder.destroy();
            holder.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
