package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

class RedisLocationTest {
    private static final UnaryOperator<String> NO_ENV = k -> null;

    @Test
    void parse_defaults() {
        RedisLocation l = RedisLocation.parse("redis://localhost", NO_ENV);
        assertThat(l.host).isEqualTo("localhost");
        assertThat(l.port).isEqualTo(6379);
        assertThat(l.database).isZero();
        assertThat(l.tls).isFalse();
        assertThat(l.user).isNull();
        assertThat(l.password).isNull();
        assertThat(l.prefix).isEqualTo("interlock:");
        assertThat(l.timeout).isEqualTo(Duration.ofSeconds(2));
        assertThat(l.description()).isEqualTo("redis://localhost:6379/0");
    }

    @Test
    void parse_everything_andDescriptionHidesCredentials() {
        RedisLocation l = RedisLocation.parse(
                "rediss://alice:p%40ss%3Aw0rd@[::1]:6380/3?prefix=app%3Alocks:&timeout=500ms&poll=250ms&pool=4",
                NO_ENV);
        assertThat(l.tls).isTrue();
        assertThat(l.host).isEqualTo("::1");
        assertThat(l.port).isEqualTo(6380);
        assertThat(l.database).isEqualTo(3);
        assertThat(l.user).isEqualTo("alice");
        assertThat(l.password).isEqualTo("p@ss:w0rd");
        assertThat(l.prefix).isEqualTo("app:locks:");
        assertThat(l.timeout).isEqualTo(Duration.ofMillis(500));
        assertThat(l.poll).isEqualTo(Duration.ofMillis(250));
        assertThat(l.pool).isEqualTo(4);
        assertThat(l.description())
                .isEqualTo("rediss://****@[::1]:6380/3?prefix=app:locks:&timeout=500ms&poll=250ms&pool=4")
                .doesNotContain("alice")
                .doesNotContain("p@ss");
        assertThat(l.toString()).isEqualTo(l.description());
    }

    @Test
    void parse_passwordOnly_isForTheDefaultUser() {
        RedisLocation a = RedisLocation.parse("redis://:s3cret@h", NO_ENV);
        assertThat(a.user).isNull();
        assertThat(a.password).isEqualTo("s3cret");
        RedisLocation b = RedisLocation.parse("redis://s3cret@h", NO_ENV);
        assertThat(b.user).isNull();
        assertThat(b.password).isEqualTo("s3cret");
    }

    @Test
    void parse_passwordFromRedisCliAuth_whenTheUriHasNone() {
        UnaryOperator<String> env = Map.of("REDISCLI_AUTH", "fromenv")::get;
        assertThat(RedisLocation.parse("redis://h", env).password).isEqualTo("fromenv");
        assertThat(RedisLocation.parse("redis://:given@h", env).password).isEqualTo("given");
        assertThat(RedisLocation.parse("redis://h", env).description()).isEqualTo("redis://****@h:6379/0");
    }

    @Test
    void badUris_sayWhatToFix_withoutRepeatingThePassword() {
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h/x", NO_ENV))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("database number")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?colour=red", NO_ENV))
                .hasMessageContaining("unknown option 'colour'")
                .hasMessageContaining("prefix=...")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?prefx=a", NO_ENV))
                .hasMessageContaining("did you mean 'prefix'?")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?timeout=soon", NO_ENV))
                .hasMessageContaining("timeout must be a duration")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?timeout=0ms", NO_ENV))
                .hasMessageContaining("between")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?prefix=a%7Bb%7D", NO_ENV))
                .hasMessageContaining("brace")
                .hasMessageNotContaining("Hunter2pw");
        // Issue 25: a raw brace is no password problem.
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter2pw@h?prefix=a{b}", NO_ENV))
                .hasMessageContaining("prefix")
                .hasMessageContaining("brace")
                .hasMessageNotContaining("password")
                .hasMessageNotContaining("Hunter2pw");
        assertThatThrownBy(() -> RedisLocation.parse("redis://h?prefix=a|b", NO_ENV))
                .hasMessageContaining("the character '|' in its options")
                .hasMessageNotContaining("password");
        assertThatThrownBy(() -> RedisLocation.parse("redis://:Hunter 2pw@h", NO_ENV))
                .hasMessageContaining("malformed redis URI")
                .hasMessageContaining("percent-encoded")
                .hasMessageNotContaining("Hunter");
        assertThatThrownBy(() -> RedisLocation.parse("redis:///0", NO_ENV)).hasMessageContaining("names no host");
        assertThatThrownBy(() -> RedisLocation.parse("redis://h?pool=1", NO_ENV))
                .hasMessageContaining("pool must be");
    }
}
