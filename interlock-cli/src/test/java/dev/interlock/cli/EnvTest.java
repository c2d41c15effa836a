package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The fields read from /proc/self/status without a regular expression. */
class EnvTest {
    @Test
    void theFirstNumberAfterTheLabel_isTheRealUid() {
        assertThat(Env.firstNumber("Uid:\t1000\t1001\t1002\t1003", 4)).isEqualTo(1000);
        assertThat(Env.firstNumber("Uid:   0 0 0 0", 4)).isEqualTo(0);
        assertThat(Env.firstNumber("Uid:", 4)).isEqualTo(-1);
    }

    @Test
    void thisProcess_hasTheUidOfItsUser() throws Exception {
        Process p = new ProcessBuilder("id", "-u").start();
        long expected = Long.parseLong(new String(p.getInputStream().readAllBytes()).trim());
        assertThat(Env.currentUid()).isEqualTo(expected);
    }

    @Test
    void aStatusField_isTheTextAfterItsLabel_andAMissingOneIsNull() {
        assertThat(Env.statusField("SigIgn")).matches("\\s*[0-9a-f]{16}");
        assertThat(Env.statusField("Uid")).startsWith("\t").contains(Long.toString(Env.currentUid()));
        assertThat(Env.statusField("Pid"))
                .isEqualTo("\t" + ProcessHandle.current().pid());
        assertThat(Env.statusField("NoSuchField")).isNull();
    }
}
