package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The file backends' one name mapping, with each backend's prefixes. */
class FileNameMappingTest {
    final FileNameMapping flock = new FileNameMapping(".x-", ".h-");
    final FileNameMapping dir = new FileNameMapping("%", "#");

    @Test
    void plainEncodedAndHashedForms_readBackOnlyWhenCanonical() {
        for (FileNameMapping m : new FileNameMapping[] {flock, dir}) {
            assertThat(m.fileName("nightly")).isEqualTo("nightly");
            assertThat(m.nameOf(m.fileName("a/b"))).contains("a/b");
            assertThat(m.nameOf(m.fileName("../x"))).contains("../x");
            String longName = "é".repeat(300);
            assertThat(m.isHashed(m.fileName(longName))).isTrue();
            assertThat(m.nameOf(m.fileName(longName))).isEmpty();
        }
        // A file that encodes a plain name is not that name's file: it is foreign (flock: used to
        // read '.x-abc' back as lock 'abc', whose file is 'abc').
        assertThat(flock.nameOf(".x-abc")).isEmpty();
        assertThat(dir.nameOf("%abc")).isEmpty();
        assertThat(flock.nameOf(".x-a%2fb"))
                .as("lower-case hex is not canonical")
                .isEmpty();
        assertThat(flock.nameOf(".hidden")).isEmpty();
    }

    @Test
    void randomNames_neverShareAFile() {
        Random r = new Random(42);
        String alphabet = "ab./%_-é\u0000x ";
        for (FileNameMapping m : new FileNameMapping[] {flock, dir}) {
            Map<String, String> byFile = new HashMap<>();
            for (int i = 0; i < 50_000; i++) {
                StringBuilder sb = new StringBuilder();
                int len = 1 + r.nextInt(8);
                for (int k = 0; k < len; k++) {
                    sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
                }
                String name = sb.toString();
                String file = m.fileName(name);
                String before = byFile.putIfAbsent(file, name);
                assertThat(before == null || before.equals(name))
                        .as(name + " and " + before + " share " + file)
                        .isTrue();
                assertThat(file).doesNotContain("/").isNotIn(".", "..");
                if (!m.isHashed(file)) {
                    assertThat(m.nameOf(file)).contains(name);
                }
            }
        }
    }
}
