package dev.interlock.spi.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UriOptionsTest {
    private static final List<String> TAKES = List.of("table", "create", "passwordFile");

    @Test
    void parse_knownOptions_inTheBackendsSpelling_inOrder() {
        Map<String, String> o =
                UriOptions.parse("CREATE&table=a%20b&passwordfile=/p", "jdbc:", TAKES, v -> v.replace("%20", " "));
        assertThat(o)
                .containsExactly(Map.entry("create", ""), Map.entry("table", "a b"), Map.entry("passwordFile", "/p"));
        assertThat(UriOptions.parse(null, "jdbc:", TAKES, v -> v)).isEmpty();
    }

    @Test
    void parse_unknownOption_isRefused_namingTheOptions_andTheNearestToATypo() {
        assertThatThrownBy(() -> UriOptions.parse("tabel=x", "jdbc:", TAKES, v -> v))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "unknown option 'tabel' (did you mean 'table'?); jdbc: takes create=..., passwordFile=..., table=...");
        assertThatThrownBy(() -> UriOptions.parse("colour=red", "redis:", TAKES, v -> v))
                .hasMessageNotContaining("did you mean");
        assertThatThrownBy(() -> UriOptions.parse("x=1", "mem:", List.of(), v -> v))
                .hasMessageContaining("mem: takes no options");
    }

    @Test
    void parse_optionGivenTwice_isRefused() {
        assertThatThrownBy(() -> UriOptions.parse("table=a&TABLE=b", "jdbc:", TAKES, v -> v))
                .hasMessageContaining("'table' is given twice");
    }

    @Test
    void parse_passesOnWhatAnotherReaderTakes_asWritten_andNamesItInTheMessage() {
        UriOptions.Parsed p = UriOptions.parse(
                "user=u&table=t&ssl=true", "jdbc:", TAKES, k -> !k.equals("tabel"), "the JDBC driver (D)", v -> v);
        assertThat(p.options()).containsExactly(Map.entry("table", "t"));
        assertThat(p.passedOn()).containsExactly("user=u", "ssl=true");
        assertThatThrownBy(() -> UriOptions.parse(
                        "tabel=t", "jdbc:", TAKES, k -> !k.equals("tabel"), "the JDBC driver (D)", v -> v))
                .hasMessageContaining("did you mean 'table'?")
                .hasMessageContaining("the options of the JDBC driver (D)");
    }

    @Test
    void duration_takesTheCommandLinesWords_withinItsRange() {
        assertThat(UriOptions.duration("dir URI option ", "poll", "1h", Duration.ofMillis(1), Duration.ofHours(2)))
                .isEqualTo(Duration.ofHours(1));
        assertThat(UriOptions.duration("x ", "poll", "1m30s", Duration.ofMillis(1), Duration.ofHours(2)))
                .isEqualTo(Duration.ofSeconds(90));
        assertThat(UriOptions.duration("x ", "poll", "2.5", Duration.ofMillis(1), Duration.ofHours(2)))
                .isEqualTo(Duration.ofMillis(2500));
        assertThatThrownBy(() -> UriOptions.duration(
                        "redis URI option ", "poll", "soon", Duration.ofMillis(1), Duration.ofMinutes(10)))
                .hasMessage(
                        "redis URI option poll must be a duration (use e.g. 500ms, 30s, 5m, 1h, 1h30m, or seconds such as 2.5),"
                                + " was 'soon'");
        assertThatThrownBy(() -> UriOptions.duration(
                        "redis URI option ", "poll", "1h", Duration.ofMillis(1), Duration.ofMinutes(10)))
                .hasMessage("redis URI option poll must be between 1ms and 10m, was 1h");
    }
}
