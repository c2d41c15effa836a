package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Several JVMs contend for one name on one server; the testkit's checker proves exclusion, token order and no lost update. */
class RedisMultiProcessIT {
    @TempDir
    Path tmp;

    @Test
    void exclusiveWorkers_neverOverlap() throws Exception {
        String uri = TestRedis.shared().uri(TestRedis.newPrefix(), "");
        ExclusionChecker.Report r = MultiProcessChecker.run(uri, "counter", "ex", 4, 200, tmp);
        assertThat(r.exclusive()).isEqualTo(800);
    }

    @Test
    void mixedSharedAndExclusiveWorkers_neverOverlap_onANameWithBraces() throws Exception {
        String uri = TestRedis.shared().uri(TestRedis.newPrefix(), "");
        ExclusionChecker.Report r = MultiProcessChecker.run(uri, "a{b} c}", "mixed", 5, 200, tmp);
        assertThat(r.sections()).isEqualTo(1000);
        assertThat(r.exclusive()).isPositive();
    }
}
