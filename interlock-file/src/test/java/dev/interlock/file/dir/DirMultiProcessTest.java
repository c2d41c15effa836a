package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several JVMs contend for one name; the testkit's checker proves exclusion, token order and no lost update. */
class DirMultiProcessTest {
    @TempDir
    Path tmp;

    @Test
    void exclusiveWorkers_neverOverlap() throws Exception {
        Path locks = Files.createDirectory(tmp.resolve("locks"));
        ExclusionChecker.Report r = MultiProcessChecker.run("dir:" + locks, "counter", "ex", 4, 150, tmp);
        assertThat(r.exclusive()).isEqualTo(600);
    }

    @Test
    void mixedSharedAndExclusiveWorkers_neverOverlap() throws Exception {
        Path locks = Files.createDirectory(tmp.resolve("locks"));
        ExclusionChecker.Report r = MultiProcessChecker.run("dir:" + locks, "a/b c", "mixed", 5, 150, tmp);
        assertThat(r.sections()).isEqualTo(750);
        assertThat(r.exclusive()).isPositive();
    }
}
