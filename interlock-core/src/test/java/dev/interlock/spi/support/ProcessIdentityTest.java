package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Host names made safe for owner ids and file names, as the regular expression did. */
class ProcessIdentityTest {
    @Test
    void aPlainHostName_isKeptAsItIs() {
        String h = "build-07.example.org";
        assertThat(ProcessIdentity.sanitizeHost(h)).isSameAs(h);
    }

    @Test
    void everyOtherCharacter_becomesOneUnderscore() {
        for (String h : new String[] {"a b:c/d", "héllo", "x\uD83D\uDE00y", ":", "", "über_host"}) {
            assertThat(ProcessIdentity.sanitizeHost(h)).as(h).isEqualTo(h.replaceAll("[^A-Za-z0-9._-]", "_"));
        }
    }

    @Test
    void thisProcess_isReadFromProcSelfStat_asProcessHandleSeesIt() {
        long[] self = ProcessIdentity.selfStat();
        assertThat(self).isNotNull();
        assertThat(self[0]).isEqualTo(ProcessHandle.current().pid());
        assertThat(self[1])
                .isPositive()
                .isEqualTo(ProcessIdentity.startTicks(self[0]).orElseThrow());
        assertThat(ProcessIdentity.current().pid()).isEqualTo(self[0]);
        assertThat(ProcessIdentity.current().startTicks()).isEqualTo(self[1]);
    }

    @Test
    void startTicks_ofACommandNameWithSpacesAndParentheses_isField22() {
        String stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 50";
        assertThat(ProcessIdentity.startTicksFromStat(stat)).isEqualTo(987654);
        assertThat(ProcessIdentity.startTicks(Long.MAX_VALUE)).isEmpty();
    }
}
