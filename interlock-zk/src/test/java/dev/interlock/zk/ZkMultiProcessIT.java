package dev.interlock.zk;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several JVMs contend for one name on one server; the testkit's checker proves exclusion, token order and no lost update. */
class ZkMultiProcessIT {
    @TempDir
    Path tmp;

    @Test
    void exclusiveWorkers_neverOverlap() throws Exception {
        ExclusionChecker.Report r =
                MultiProcessChecker.run(TestZk.uri(TestZk.newPath(), ""), "counter", "ex", 4, 150, tmp);
        assertThat(r.exclusive()).isEqualTo(600);
    }

    @Test
    void mixedSharedAndExclusiveWorkers_neverOverlap_onANameWithSlashes() throws Exception {
        ExclusionChecker.Report r =
                MultiProcessChecker.run(TestZk.uri(TestZk.newPath(), ""), "a/b/../c", "mixed", 4, 150, tmp);
        assertThat(r.sections()).isEqualTo(600);
        assertThat(r.exclusive()).isPositive();
    }
}
