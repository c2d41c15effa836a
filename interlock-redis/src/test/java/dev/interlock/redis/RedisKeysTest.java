package dev.interlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

class RedisKeysTest {
    private static final List<String> NAMES = List.of(
            "a",
            "{a}",
            "a}",
            "{a",
            "}{",
            "{}",
            "}",
            "{",
            "%",
            "%7B",
            "%7D",
            "%25",
            "a b",
            " ",
            "a{b}c",
            "x".repeat(1024),
            "}".repeat(1024),
            "{".repeat(1024),
            "données/日本語 🔒",
            "*",
            "?",
            "[a]");

    private final RedisKeys keys = new RedisKeys("app:");

    @Test
    void encode_isInjectiveAndLeavesNoBrace() {
        Set<String> seen = new HashSet<>();
        for (String n : NAMES) {
            String e = RedisKeys.encode(n);
            assertThat(e).doesNotContain("{").doesNotContain("}");
            assertThat(seen.add(e)).as("'%s' encodes like another name", n).isTrue();
            assertThat(RedisKeys.decode(e)).contains(n);
        }
    }

    @Test
    void everyKeyOfALock_isInOneClusterSlot_andDistinctFromOtherNames() {
        Set<Integer> slotsOfBraceNames = new HashSet<>();
        Set<String> locks = new HashSet<>();
        for (String n : NAMES) {
            int slot = JedisClusterCRC16.getSlot(keys.lock(n));
            assertThat(JedisClusterCRC16.getSlot(keys.fence(n)))
                    .as("fence of '%s'", n)
                    .isEqualTo(slot);
            assertThat(JedisClusterCRC16.getSlot(keys.channel(n)))
                    .as("channel of '%s'", n)
                    .isEqualTo(slot);
            // The hash tag is the whole encoded name: the slot is that of the name alone, not of the prefix.
            assertThat(slot).isEqualTo(JedisClusterCRC16.getSlot(RedisKeys.encode(n)));
            assertThat(locks.add(keys.lock(n))).isTrue();
            slotsOfBraceNames.add(slot);
        }
        assertThat(slotsOfBraceNames.size()).as("names spread over slots").isGreaterThan(NAMES.size() / 2);
    }

    @Test
    void nameOf_readsBackLockAndFenceKeys_only() {
        for (String n : NAMES) {
            assertThat(keys.nameOf(keys.lock(n))).contains(n);
            assertThat(keys.nameOf(keys.fence(n))).contains(n);
            assertThat(keys.nameOf(keys.channel(n))).isEmpty();
        }
        assertThat(keys.nameOf("other:{a}")).isEmpty();
        assertThat(keys.nameOf("app:{a%}")).as("not an encoding").isEmpty();
        assertThat(keys.nameOf("app:{}")).isEmpty();
        assertThat(keys.nameOf("app:{a}:x")).isEmpty();
    }

    @Test
    void scanPattern_escapesGlobCharactersOfThePrefix() {
        assertThat(new RedisKeys("a*b?[c]\\:").scanPattern()).isEqualTo("a\\*b\\?\\[c\\]\\\\:{*");
        assertThat(keys.scanPattern()).isEqualTo("app:{*");
    }

    @Test
    void prefixWithBrace_isRejectedWithTheReason() {
        assertThatThrownBy(() -> new RedisKeys("app{x}:"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("brace")
                .hasMessageContaining("hash tag");
    }
}
