package dev.interlock.file.flock;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class NameMappingTest {
    @Test
    void plainNames_mapToThemselves() {
        assertThat(NameMapping.fileName("nightly-report_v2.lock")).isEqualTo("nightly-report_v2.lock");
        assertThat(NameMapping.fileName("a.b")).isEqualTo("a.b");
    }

    @Test
    void otherNames_areEncodedInside_theDirectory() {
        assertThat(NameMapping.fileName("a/b")).isEqualTo(".x-a%2Fb");
        assertThat(NameMapping.fileName("../x")).isEqualTo(".x-..%2Fx");
        assertThat(NameMapping.fileName("..")).isEqualTo(".x-..");
        assertThat(NameMapping.fileName(".")).isEqualTo(".x-.");
        assertThat(NameMapping.fileName(".hidden")).isEqualTo(".x-.hidden");
        assertThat(NameMapping.fileName("a%2Fb")).isEqualTo(".x-a%252Fb");
        assertThat(NameMapping.fileName("é")).isEqualTo(".x-%C3%A9");
    }

    @Test
    void longNames_areHashed() {
        String f = NameMapping.fileName("é".repeat(100));
        assertThat(f).startsWith(".h-").hasSize(3 + 64);
        assertThat(NameMapping.fileName("x".repeat(201)))
                .as("too long to be plain or encoded")
                .startsWith(".h-");
        assertThat(NameMapping.fileName("/".repeat(65)))
                .as("encoding fits in 200")
                .isEqualTo(".x-" + "%2F".repeat(65));
        assertThat(NameMapping.fileName("/".repeat(66)))
                .as("encoding would exceed 200")
                .startsWith(".h-");
    }

    @Test
    void mapping_isInjective_andDecodes_forRandomNames() {
        SplittableRandom rnd = new SplittableRandom(42);
        String alphabet = "aA0._-/%\\ é日🔒.";
        Map<String, String> seen = new HashMap<>();
        for (int i = 0; i < 200_000; i++) {
            StringBuilder sb = new StringBuilder();
            int len = 1 + rnd.nextInt(8);
            for (int j = 0; j < len; j++) {
                int cp = alphabet.codePointAt(
                        alphabet.offsetByCodePoints(0, rnd.nextInt(alphabet.codePointCount(0, alphabet.length()))));
                sb.appendCodePoint(cp);
            }
            String name = sb.toString();
            String file = NameMapping.fileName(name);
            String before = seen.putIfAbsent(file, name);
            assertThat(before == null || before.equals(name))
                    .as("%s and %s share %s", before, name, file)
                    .isTrue();
            assertThat(file).doesNotContain("/").isNotIn(".", "..");
            if (!NameMapping.isHashed(file)) {
                assertThat(NameMapping.nameOf(file)).contains(name);
            }
        }
    }

    @Test
    void nameOf_rejectsNonCanonicalAndForeignFiles() {
        assertThat(NameMapping.nameOf(".x-a%2fb"))
                .as("lower-case escape is not canonical")
                .isEmpty();
        assertThat(NameMapping.nameOf(".x-a%2")).isEmpty();
        assertThat(NameMapping.nameOf(".gates")).isEmpty();
        assertThat(NameMapping.nameOf("has space")).isEmpty();
    }
}
