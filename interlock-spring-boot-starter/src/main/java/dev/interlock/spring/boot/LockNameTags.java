package dev.interlock.spring.boot;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The low-cardinality name tag of observations, by the rule {@code MicrometerLockMetrics} uses
 * for its meters ({@code docs/metrics.md}): the first N distinct lock names keep their own name,
 * every later one is {@value #OTHER}; with N = 0 there is no name at all ({@value #NONE}). Given
 * the same {@code interlock.metrics.tag-names}, meters and spans so agree on the names they show.
 */
final class LockNameTags {
    static final String OTHER = "other";
    static final String NONE = "none";

    private final int max;
    private final Set<String> seen = ConcurrentHashMap.newKeySet();

    LockNameTags(int max) {
        this.max = max;
    }

    String tag(String name) {
        if (max == 0) {
            return NONE;
        }
        if (seen.contains(name)) {
            return name;
        }
        synchronized (seen) {
            if (seen.contains(name) || seen.size() < max) {
                seen.add(name);
                return name;
            }
        }
        return OTHER;
    }
}
