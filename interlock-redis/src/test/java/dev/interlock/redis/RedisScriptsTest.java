package dev.interlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RedisScriptsTest {

    private static int count(String s, String part) {
        int n = 0;
        for (int i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    @Test
    void everyScript_hasThePreludeFirst_andTheLibraryOnce_withoutTheMarker() {
        for (RedisScripts s : RedisScripts.values()) {
            assertTrue(s.source.startsWith("-- Interlock redis: backend, shared part of every script"), s.name());
            assertEquals(1, count(s.source, "local function load("), s.name());
            assertEquals(1, count(s.source, "local function num("), s.name());
            assertFalse(s.source.contains(RedisScripts.LIBRARY), s.name());
            assertEquals(40, s.sha.length(), s.name());
        }
    }

    @Test
    void shortPaths_comeBeforeTheLibrary_soThatTheyCreateNoFunctions() {
        String acquire = RedisScripts.ACQUIRE.source;
        int fast = acquire.indexOf("if redis.call('EXISTS', lock) == 0 then");
        assertTrue(
                fast > 0 && fast < acquire.indexOf("local function load("),
                "acquire's short path is after the library");
        String release = RedisScripts.RELEASE.source;
        int only = release.indexOf("local only = redis.pcall('HGET'");
        assertTrue(
                only > 0 && only < release.indexOf("local function load("),
                "release's short path is after the library");
    }

    @Test
    void scriptsWithoutShortPaths_haveTheLibraryBeforeTheirBody() {
        String renew = RedisScripts.RENEW.source;
        assertTrue(
                renew.indexOf("local function load(") < renew.indexOf("-- renew"),
                "renew's body comes before the library");
    }
}
