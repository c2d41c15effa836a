package dev.interlock.redis;

import java.util.Optional;

/**
 * Where a lock name lives in Redis (docs/redis.md, "Key layout"). For a name N under prefix P:
 * <ul>
 *   <li>{@code P{E}} is the lock hash (holders and queued waiters), with a TTL;</li>
 *   <li>{@code P{E}:fence} is the fencing counter, without a TTL;</li>
 *   <li>{@code P{E}:wake} is the pub/sub channel its waiters listen on;</li>
 * </ul>
 * where E is N with {@code %}, <code>{</code> and <code>}</code> percent-encoded. E therefore holds no
 * brace, so the first <code>{</code> of every key opens E and the first <code>}</code> closes it: Redis
 * Cluster hashes exactly E (a non-empty hash tag, as names are never empty), so all keys of one lock
 * share a slot, and the mapping from names to keys is injective. The prefix may not contain a brace
 * (it would become the hash tag).
 */
final class RedisKeys {
    static final String DEFAULT_PREFIX = "interlock:";
    private static final String FENCE = ":fence";
    private static final String WAKE = ":wake";

    private final String prefix;

    RedisKeys(String prefix) {
        this.prefix = checkPrefix(prefix);
    }

    /**
     * @throws IllegalArgumentException if the prefix contains a brace or a control character
     */
    static String checkPrefix(String prefix) {
        if (prefix.indexOf('{') >= 0 || prefix.indexOf('}') >= 0) {
            throw new IllegalArgumentException(
                    "the key prefix '" + prefix + "' contains a brace; Interlock puts the lock name between"
                            + " braces (a Redis Cluster hash tag), so the prefix may not have any: choose another prefix");
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (Character.isISOControl(prefix.charAt(i))) {
                throw new IllegalArgumentException(
                        "the key prefix must not contain control characters (found one at index " + i + ")");
            }
        }
        return prefix;
    }

    String prefix() {
        return prefix;
    }

    String lock(String name) {
        return prefix + '{' + encode(name) + '}';
    }

    String fence(String name) {
        return lock(name) + FENCE;
    }

    /**
     * The channel on which holders of one process hear that a lock of theirs was removed by
     * someone else (a break): {@code P:interlock-lost:host:pid:start}, from the owner id
     * {@code host:pid:start:nonce}.
     */
    String lostChannel(String ownerId) {
        int last = ownerId.lastIndexOf(':');
        return prefix + "interlock-lost:" + (last > 0 ? ownerId.substring(0, last) : ownerId);
    }

    String channel(String name) {
        return lock(name) + WAKE;
    }

    /** A SCAN MATCH pattern for every key of this prefix. */
    String scanPattern() {
        StringBuilder sb = new StringBuilder();
        for (char c : prefix.toCharArray()) {
            if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.append("{*").toString();
    }

    /** The lock name a key of this prefix belongs to, if it is a lock hash or a fence counter. */
    Optional<String> nameOf(String key) {
        if (!key.startsWith(prefix + '{')) {
            return Optional.empty();
        }
        int open = prefix.length();
        int close = key.indexOf('}', open);
        if (close < 0) {
            return Optional.empty();
        }
        String rest = key.substring(close + 1);
        if (!rest.isEmpty() && !rest.equals(FENCE)) {
            return Optional.empty();
        }
        return decode(key.substring(open + 1, close));
    }

    static String encode(String name) {
        StringBuilder sb = null;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            String rep = c == '%' ? "%25" : c == '{' ? "%7B" : c == '}' ? "%7D" : null;
            if (rep != null && sb == null) {
                sb = new StringBuilder(name.length() + 8).append(name, 0, i);
            }
            if (sb != null) {
                if (rep != null) {
                    sb.append(rep);
                } else {
                    sb.append(c);
                }
            }
        }
        return sb == null ? name : sb.toString();
    }

    /** The inverse of {@link #encode}; empty for text that {@code encode} never produces. */
    static Optional<String> decode(String encoded) {
        if (encoded.isEmpty()) {
            return Optional.empty();
        }
        StringBuilder sb = new StringBuilder(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '{' || c == '}') {
                return Optional.empty();
            }
            if (c != '%') {
                sb.append(c);
                continue;
            }
            String esc = encoded.length() >= i + 3 ? encoded.substring(i, i + 3) : "";
            switch (esc) {
                case "%25":
                    sb.append('%');
                    break;
                case "%7B":
                    sb.append('{');
                    break;
                case "%7D":
                    sb.append('}');
                    break;
                default:
                    return Optional.empty();
            }
            i += 2;
        }
        return Optional.of(sb.toString());
    }
}
