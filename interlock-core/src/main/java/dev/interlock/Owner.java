package dev.interlock;

import dev.interlock.spi.support.ProcessIdentity;
import java.util.Objects;

/**
 * Who holds a lease: unique per acquisition. Made of the host name, the process id, the
 * process start time (so a reused pid is a different owner) and a random part (so two
 * acquisitions by one process differ). Never a fixed host name: a restarted process must not be
 * mistaken for the one that crashed.
 *
 * <p>Its {@link #id()} has the form {@code host:pid:start:nonce} and is what
 * {@code interlock status} shows and {@code interlock break --owner} takes.
 */
public final class Owner {
    private final String host;
    private final long pid;
    private final long processStart;
    private final String nonce;
    private final String id;

    public Owner(String host, long pid, long processStart, String nonce) {
        this.host = Objects.requireNonNull(host, "host");
        this.pid = pid;
        this.processStart = processStart;
        this.nonce = Objects.requireNonNull(nonce, "nonce");
        if (host.indexOf(':') >= 0 || nonce.indexOf(':') >= 0) {
            throw new IllegalArgumentException(
                    "owner host and nonce must not contain ':' (host=" + host + ", nonce=" + nonce + ")");
        }
        this.id = host + ':' + pid + ':' + processStart + ':' + nonce;
    }

    /** A new owner for one acquisition by this process. */
    public static Owner newAcquisition() {
        return ProcessIdentity.current().newOwner();
    }

    /**
     * Parses the {@link #id()} form {@code host:pid:start:nonce}.
     *
     * @throws IllegalArgumentException naming the expected form if the text is not one
     */
    public static Owner parse(String id) {
        String[] parts = id.split(":", -1);
        if (parts.length != 4) {
            throw new IllegalArgumentException("owner id '" + id + "' is not of the form host:pid:start:nonce");
        }
        try {
            return new Owner(parts[0], Long.parseLong(parts[1]), Long.parseLong(parts[2]), parts[3]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "owner id '" + id + "' is not of the form host:pid:start:nonce (pid and start are numbers)");
        }
    }

    public String host() {
        return host;
    }

    public long pid() {
        return pid;
    }

    /** Process start time in clock ticks since boot (field 22 of /proc/PID/stat), or -1 if unknown. */
    public long processStart() {
        return processStart;
    }

    /** The random part that makes this acquisition unique within its process. */
    public String nonce() {
        return nonce;
    }

    /** {@code host:pid:start:nonce}. */
    public String id() {
        return id;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Owner && ((Owner) o).id.equals(id);
    }

    @Override
    public int hashCode() {
        return id.hashCode();
    }

    @Override
    public String toString() {
        return id;
    }
}
