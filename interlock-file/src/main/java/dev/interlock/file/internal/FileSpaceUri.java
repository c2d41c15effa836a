package dev.interlock.file.internal;

import dev.interlock.spi.BackendConfig;
import dev.interlock.spi.support.UriOptions;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/**
 * Internal API: the one reading of the URIs of the file backends, {@code flock:} and {@code dir:},
 * so that both accept exactly the same forms:
 * <ul>
 *   <li>{@code scheme:/abs/path}, {@code scheme:///abs/path}, or a relative {@code scheme:path},
 *       resolved against the working directory when the space is opened (messages and
 *       {@code LockSpace.uri()} show the absolute path);</li>
 *   <li>the path is taken as written: no percent-decoding, so {@code dir:/mnt/My Locks} is the
 *       directory with a space in its name;</li>
 *   <li>{@code scheme://host/...} is refused: a lock space is a directory mounted on this host;</li>
 *   <li>options after {@code ?} as {@code key=value} pairs joined by {@code &}; each backend says
 *       which keys it takes; a {@code #} is refused.</li>
 * </ul>
 *
 * @param directory the absolute, normalized lock directory
 * @param options the options in the order given
 */
public record FileSpaceUri(Path directory, Map<String, String> options) {
    /**
     * Reads {@code config}'s location.
     *
     * @param example a valid URI of this scheme, for messages
     * @param keys the option keys this backend takes
     * @throws IllegalArgumentException naming the expected form
     */
    public static FileSpaceUri parse(BackendConfig config, String example, Set<String> keys) {
        String scheme = config.scheme() + ":";
        String shown = config.maskedUri();
        String loc = config.location();
        if (loc.indexOf('#') >= 0) {
            throw new IllegalArgumentException("'" + shown + "' has a '#'; use " + example);
        }
        Map<String, String> options = Map.of();
        int q = loc.indexOf('?');
        if (q >= 0) {
            try {
                options = UriOptions.parse(loc.substring(q + 1), scheme, keys, v -> v);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + shown + "': " + e.getMessage());
            }
            loc = loc.substring(0, q);
        }
        if (loc.startsWith("//")) {
            if (!loc.startsWith("///")) {
                int end = loc.indexOf('/', 2);
                String host = end < 0 ? loc.substring(2) : loc.substring(2, end);
                throw new IllegalArgumentException("'" + shown + "' names a host ('" + host
                        + "'); a lock space is a directory" + " mounted on this host: use " + example);
            }
            loc = loc.substring(2);
        }
        if (loc.isEmpty()) {
            throw new IllegalArgumentException("'" + shown + "' names no directory; use " + example);
        }
        try {
            return new FileSpaceUri(Path.of(loc).toAbsolutePath().normalize(), Map.copyOf(options));
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException(
                    "'" + shown + "': '" + loc + "' is not a valid path (" + e.getReason() + ")", e);
        }
    }
}
