package dev.interlock.internal;

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
}
