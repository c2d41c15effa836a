package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JsonTest {
    @Test
    void writes_nestedValues_withEscapes() {
        String s = new Json()
                .beginObject()
                .name("a")
                .value("q\"b\\s\n\u0001\u2028é")
                .name("n")
                .value(42)
                .name("t")
                .value(true)
                .name("z")
                .nullValue()
                .name("arr")
                .beginArray()
                .value(1)
                .beginObject()
                .name("k")
                .value("v")
                .endObject()
                .endArray()
                .endObject()
                .toString();
        assertThat(s)
                .isEqualTo("{\"a\":\"q\\\"b\\\\s\\n\\u0001\\u2028é\",\"n\":42,\"t\":true,\"z\":null,"
                        + "\"arr\":[1,{\"k\":\"v\"}]}");
    }
}
