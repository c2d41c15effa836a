package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Passwords masked in URIs and scrubbed from text; URIs that cannot hold one pass untouched. */
class SecretsTest {
    @Test
    void aPasswordInTheUserInfo_isMasked() {
        assertThat(Secrets.mask("jdbc:postgresql://app:s3cret@db/app")).isEqualTo("jdbc:postgresql://app:****@db/app");
        assertThat(Secrets.mask("redis://:s3cret@cache:6379")).isEqualTo("redis://:****@cache:6379");
    }

    @Test
    void aPasswordWithARawAt_isMaskedWhole() {
        assertThat(Secrets.mask("zk://app:p@ss@zk1:2181/locks")).isEqualTo("zk://app:****@zk1:2181/locks");
        assertThat(Secrets.of("zk://app:p@ss@zk1:2181/locks").scrub("no p@ss here"))
                .isEqualTo("no **** here");
    }

    @Test
    void passwordLikeParameters_areMasked() {
        assertThat(Secrets.mask("jdbc:mariadb://db/app?user=a&password=s3cret&x=1"))
                .isEqualTo("jdbc:mariadb://db/app?user=a&password=****&x=1");
        assertThat(Secrets.mask("jdbc:sqlserver://db;user=a;Pwd=s3cret"))
                .isEqualTo("jdbc:sqlserver://db;user=a;Pwd=****");
    }

    @Test
    void aUriWithoutAtOrEquals_isReturnedAsItIs() {
        String uri = "flock:/var/lock/my app;x?y&z";
        assertThat(Secrets.mask(uri)).isSameAs(uri);
        assertThat(Secrets.of(uri).scrub("flock:/var/lock/my app;x?y&z failed"))
                .isEqualTo("flock:/var/lock/my app;x?y&z failed");
        assertThat(Secrets.mask(null)).isNull();
    }

    @Test
    void theSecretValues_rawAndDecoded_areScrubbedFromText() {
        Secrets s = Secrets.of("redis://u:p%40ss@cache?token=t0k");
        assertThat(s.scrub("auth p%40ss / p@ss failed; token t0k")).isEqualTo("auth **** / **** failed; token ****");
    }
}
