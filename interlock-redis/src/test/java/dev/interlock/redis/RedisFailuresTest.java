package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.LockBackendException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

class RedisFailuresTest {
    private static LockBackendException translate(RuntimeException e) {
        return RedisFailures.translate(e, "redis://h:6379/0", "job", key -> "string");
    }

    @Test
    void everyMessage_namesSpaceAndLock_andNoJavaClass() {
        RuntimeException[] failures = {
            new JedisAccessControlException("WRONGPASS invalid username-password pair or user is disabled."),
            new JedisAccessControlException("NOAUTH Authentication required."),
            new JedisDataException("ERR AUTH <password> called without any password configured for the default user."),
            new JedisDataException("NOPERM this user has no permissions to run the 'evalsha' command"),
            new JedisDataException("READONLY You can't write against a read only replica."),
            new JedisDataException("LOADING Redis is loading the dataset in memory"),
            new JedisDataException("OOM command not allowed when used memory > 'maxmemory'."),
            new JedisDataException("INTERLOCK-WRONGTYPE app:{job}"),
            new JedisDataException("INTERLOCK-DAMAGED app:{job}"),
            new JedisConnectionException("Failed to connect", new ConnectException("Connection refused")),
            new JedisConnectionException(new SocketTimeoutException("Read timed out")),
            new JedisConnectionException(new UnknownHostException("nowhere")),
            new JedisConnectionException(
                    new SSLHandshakeException(
                            "PKIX path building failed: sun.security.provider.certpath."
                                    + "SunCertPathBuilderException: unable to find valid certification path to requested target")),
            new JedisConnectionException("Unexpected end of stream."),
        };
        for (RuntimeException f : failures) {
            LockBackendException e = translate(f);
            assertThat(e.getMessage())
                    .startsWith("redis://h:6379/0 - 'job': ")
                    .doesNotContainPattern("[a-z]+\\.[a-z]+\\.[A-Z]\\w*")
                    .doesNotContain("Exception");
            assertThat(e.getCause()).isSameAs(f);
        }
    }

    @Test
    void messages_sayWhatToFix() {
        assertThat(translate(new JedisAccessControlException("WRONGPASS invalid username-password pair"))
                        .getMessage())
                .contains("password in the URI is wrong");
        assertThat(translate(new JedisAccessControlException("NOAUTH Authentication required."))
                        .getMessage())
                .contains("requires a password")
                .contains("REDISCLI_AUTH");
        assertThat(translate(new JedisDataException("READONLY You can't write against a read only replica."))
                        .getMessage())
                .contains("point the URI at the primary");
        assertThat(translate(new JedisDataException("INTERLOCK-WRONGTYPE app:{job}"))
                        .getMessage())
                .contains("the key 'app:{job}' holds a Redis string")
                .contains("Nothing was granted");
        assertThat(translate(new JedisConnectionException(new SSLHandshakeException("PKIX path building failed")))
                        .getMessage())
                .contains("not trusted")
                .contains("trustStore");
        assertThat(translate(new JedisConnectionException("Unexpected end of stream."))
                        .getMessage())
                .contains("rediss://");
    }

    @Test
    void connectionFailures_areTransient_configurationFailuresAreNot() {
        assertThat(translate(new JedisConnectionException(new ConnectException("refused")))
                        .isTransient())
                .isTrue();
        assertThat(translate(new JedisDataException("LOADING Redis is loading")).isTransient())
                .isTrue();
        assertThat(translate(new JedisAccessControlException("WRONGPASS x")).isTransient())
                .isFalse();
        assertThat(translate(new JedisDataException("INTERLOCK-WRONGTYPE k")).isTransient())
                .isFalse();
    }
}
