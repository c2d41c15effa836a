package dev.interlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The row key is the SHA-256 of the name, cached or not, and the cache stays bounded. */
class NameKeyTest {
    @Test
    void key_isTheSha256OfTheUtf8Name_cachedOrNot() {
        String abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assertThat(NameKey.of("abc")).isEqualTo(abc);
        assertThat(NameKey.of("abc")).as("from the cache").isEqualTo(abc);
        String longName = "x".repeat(1024);
        assertThat(NameKey.of(longName)).isEqualTo(NameKey.of(longName)).hasSize(64);
        assertThat(NameKey.of("é"))
                .as("UTF-8 bytes c3 a9")
                .isEqualTo("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
    }

    @Test
    void cache_staysBounded() {
        for (int i = 0; i < NameKey.CACHE_MAX * 2 + 10; i++) {
            NameKey.of("bounded-" + i);
        }
        assertThat(NameKey.cached()).isLessThanOrEqualTo(NameKey.CACHE_MAX);
    }
}
