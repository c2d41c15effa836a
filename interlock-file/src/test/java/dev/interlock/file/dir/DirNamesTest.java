package dev.interlock.file.dir;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DirNamesTest {
    @Test
    void encode_plainNames_mapToThemselves() {
        assertThat(DirNames.encode("nightly-report")).isEqualTo("nightly-report");
        assertThat(DirNames.encode("a.b")).isEqualTo("a.b");
        assertThat(DirNames.encode("a_b")).isEqualTo("a_b");
    }

    @Test
    void encode_namesThatCollideWhenMangled_stayDistinctAndInside() {
        List<String> names = List.of(
                "a.b",
                "a_b",
                "a/b",
                "../x",
                "..",
                ".",
                ".x",
                "%a",
                "%a%2Fb",
                "a%2Fb",
                "#x",
                "a b",
                "a\\b",
                "données",
                "日本語",
                "🔒",
                "A.B",
                "-",
                "x".repeat(200),
                "x".repeat(201),
                "/".repeat(60),
                "/".repeat(70),
                "é".repeat(1024));
        Set<String> seen = new HashSet<>();
        for (String n : names) {
            String e = DirNames.encode(n);
            assertThat(seen.add(e)).as("'%s' -> '%s' is unique", n, e).isTrue();
            assertThat(e).doesNotContain("/").isNotIn(".", "..").doesNotStartWith(".");
            assertThat(e.getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
                    .isLessThanOrEqualTo(201);
            if (!DirNames.isHashed(e)) {
                assertThat(DirNames.decode(e)).as("'%s' round-trips", n).hasValue(n);
            }
        }
        assertThat(DirNames.encode("a/b")).isEqualTo("%a%2Fb");
        assertThat(DirNames.encode("../x")).isEqualTo("%..%2Fx");
        assertThat(DirNames.isHashed(DirNames.encode("/".repeat(70)))).isTrue();
    }

    @Test
    void decode_foreignOrNonCanonicalNames_areRejected() {
        assertThat(DirNames.decode(".hidden")).isEmpty();
        assertThat(DirNames.decode("%a%2fb"))
                .as("lower-case hex is not canonical")
                .isEmpty();
        assertThat(DirNames.decode("%abc")).as("a plain name needs no encoding").isEmpty();
        assertThat(DirNames.decode("%a%2")).isEmpty();
        assertThat(DirNames.decode("%a%ZZ")).isEmpty();
        assertThat(DirNames.decode("a b")).isEmpty();
        assertThat(DirNames.decode("#" + "0".repeat(64))).isEmpty();
    }

    @Test
    void entries_roundTripAndRejectNonCanonicalForms() {
        DirEntries.Holder h = new DirEntries.Holder(
                30000,
                1700000000,
                1234,
                5678,
                4026531836L,
                "0123456789abcdef0123456789abcdef",
                "00ff00ff00ff00ff",
                "host-a.example.com");
        String x = DirEntries.Gate.writer(7, 3, h);
        assertThat(DirEntries.Gate.parse(x)).hasValueSatisfying(g -> {
            assertThat(g.writer()).isTrue();
            assertThat(g.token()).isEqualTo(7);
            assertThat(g.beat()).isEqualTo(3);
            assertThat(g.holder()).isEqualTo(h);
        });
        assertThat(x.length()).isLessThan(255 - 64 + "host-a.example.com".length());
        assertThat(DirEntries.Gate.parse(DirEntries.Gate.free(9, 7, "abc"))).hasValueSatisfying(g -> {
            assertThat(g.writer()).isFalse();
            assertThat(g.token()).isEqualTo(9);
            assertThat(g.lastWriter()).isEqualTo(7);
        });
        assertThat(DirEntries.Gate.parse("F.09.7.abc")).isEmpty();
        assertThat(DirEntries.Gate.parse("F.9.10.abc"))
                .as("last writer after the last token")
                .isEmpty();
        assertThat(DirEntries.Gate.parse("F.9.7")).isEmpty();
        assertThat(DirEntries.Gate.parse("X.1.0.garbage")).isEmpty();
        assertThat(DirEntries.Reader.parse(DirEntries.Reader.name(5, h)))
                .hasValueSatisfying(r -> assertThat(r.holder()).isEqualTo(h));
        assertThat(DirEntries.Beat.parse(DirEntries.Beat.name(5, 0, h)))
                .hasValueSatisfying(b -> assertThat(b.holder()).isEqualTo(h));
        assertThat(DirEntries.Beat.parse("B.5.0")).isEmpty();
        assertThat(DirEntries.Beat.parse("B.5.0.1")).isEmpty();
        assertThat(DirNames.recordUnescape(DirNames.recordEscape("données/日本語 🔒 %")))
                .hasValue("données/日本語 🔒 %");
    }
}
