package dev.interlock.internal;

import dev.interlock.Owner;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Internal API, not for use outside Interlock: the identity of this process (host, pid, start
 * time, boot id) and liveness checks of other processes on this host.
 */
public final class ProcessIdentity {
    private static volatile ProcessIdentity current;

    private final String host;
    private final long pid;
    private final long startTicks;
    private final String bootId;
    private final long nonceBase;
    private final AtomicLong counter = new AtomicLong();

    private ProcessIdentity(String host, long pid, long startTicks, String bootId) {
        this.host = host;
        this.pid = pid;
        this.startTicks = startTicks;
        this.bootId = bootId;
        this.nonceBase = ThreadLocalRandom.current().nextLong();
    }

    /** This process. Computed once. */
    public static ProcessIdentity current() {
        ProcessIdentity p = current;
        if (p == null) {
            synchronized (ProcessIdentity.class) {
                p = current;
                if (p == null) {
                    long pid = ProcessHandle.current().pid();
                    p = current = new ProcessIdentity(hostName(), pid, startTicks(pid).orElse(-1), readBootId());
                }
            }
        }
        return p;
    }

    public String host() {
        return host;
    }

    public long pid() {
        return pid;
    }

    /** Start time in clock ticks since boot, or -1 if unknown. */
    public long startTicks() {
        return startTicks;
    }

    /** {@code /proc/sys/kernel/random/boot_id}, or the empty string if unknown. */
    public String bootId() {
        return bootId;
    }

    /** A new owner: this process plus a nonce unique within it (random base plus a counter). */
    public Owner newOwner() {
        return newOwner(pid, startTicks);
    }

    /** A new owner on this host for another process ({@code pid}, started at {@code startTicks}), with a fresh nonce. */
    public Owner newOwner(long pid, long startTicks) {
        long n = nonceBase + counter.incrementAndGet() * 0x9E3779B97F4A7C15L;
        String hex = Long.toHexString(n);
        return new Owner(host, pid, startTicks, hex.length() == 16 ? hex : "0".repeat(16 - hex.length()) + hex);
    }

    /** The host name from the kernel (UTS namespace aware); never does a DNS lookup if avoidable. */
    static String hostName() {
        try {
            String h = Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).trim();
            if (!h.isEmpty()) {
                return sanitizeHost(h);
            }
        } catch (IOException | RuntimeException ignored) {
            // not Linux; fall through
        }
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return sanitizeHost(env.trim());
        }
        try {
            return sanitizeHost(InetAddress.getLocalHost().getHostName());
        } catch (IOException e) {
            return "localhost";
        }
    }

    /** {@code h} with every character but {@code [A-Za-z0-9._-]} replaced by '_' (by hand: no regex to compile at start). */
    static String sanitizeHost(String h) {
        StringBuilder out = null;
        for (int i = 0; i < h.length(); ) {
            int c = h.codePointAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            if (!ok && out == null) {
                out = new StringBuilder(h.length()).append(h, 0, i);
            }
            if (out != null) {
                out.append(ok ? (char) c : '_');
            }
            i += Character.charCount(c);
        }
        return out == null ? h : out.toString();
    }

    static String readBootId() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/random/boot_id"), StandardCharsets.US_ASCII).trim();
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /**
     * Start time of process {@code pid} in clock ticks since boot (field 22 of /proc/PID/stat), or
     * empty if there is no such process (or it cannot be read).
     */
    public static OptionalLong startTicks(long pid) {
        if (pid <= 0) {
            return OptionalLong.empty();
        }
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.US_ASCII);
            // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
            int close = stat.lastIndexOf(')');
            String[] f = stat.substring(close + 2).split(" ");
            // f[0] is field 3 (state); field 22 is f[19].
            return OptionalLong.of(Long.parseLong(f[19]));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }
}
