package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.SemaphoreChecker;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** K processes contend for N permits on one ZooKeeper server; the testkit's checker proves at most N inside and token order. */
class ZkSemaphoreIT {
    @TempDir
    Path tmp;

    @Test
    void fiveProcesses_onASemaphoreOfTwo_neverMoreThanTwoInside_tokensInGrantOrder() throws Exception {
        List<SemaphoreChecker.Held> held =
                SemaphoreChecker.run(TestZk.uri(TestZk.newPath(), ""), "imports", 2, 5, 40, tmp);
        assertThat(held).hasSize(200);
        assertThat(held).extracting(SemaphoreChecker.Held::slot).contains(0, 1); // two were inside at once
    }
}
