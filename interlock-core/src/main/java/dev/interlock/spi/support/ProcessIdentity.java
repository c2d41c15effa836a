package dev.interlock.spi.support;

import dev.interlock.Owner;
import java.io.FileInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * For backends (not for applications): the identity of this process (host, pid, start
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
                    // pid and start time from one read of /proc/self/stat: ProcessHandle.current()
                    // would initialise the JDK's process-reaper machinery, a tenth of a short
                    // command's start on JDK 17, for a number.
                    long[] self = selfStat();
                    long pid = self != null ? self[0] : ProcessHandle.current().pid();
                    long start = self != null ? self[1] : startTicks(pid).orElse(-1);
                    p = current = new ProcessIdentity(hostName(), pid, start, readBootId());
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

    /** {pid, start ticks} of this process from /proc/self/stat, or null if it cannot be read. */
    static long[] selfStat() {
        try {
            String stat = read("/proc/self/stat", StandardCharsets.US_ASCII);
            long pid = Long.parseLong(stat.substring(0, stat.indexOf(' ')));
            return new long[] {pid, startTicksFromStat(stat)};
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * A small file (of /proc) through java.io: java.nio's channel, buffers and file system cost a
     * short command's start more than the read.
     */
    private static String read(String path, Charset charset) throws IOException {
        try (FileInputStream in = new FileInputStream(path)) {
            return new String(in.readAllBytes(), charset);
        }
    }

    /** The host name from the kernel (UTS namespace aware); never does a DNS lookup if avoidable. */
    static String hostName() {
        try {
            String h = read("/proc/sys/kernel/hostname", StandardCharsets.UTF_8).trim();
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
            boolean ok = (c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == '-';
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
            return read("/proc/sys/kernel/random/boot_id", StandardCharsets.US_ASCII)
                    .trim();
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
            return OptionalLong.of(startTicksFromStat(read("/proc/" + pid + "/stat", StandardCharsets.US_ASCII)));
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /** Field 22 of a /proc/PID/stat line: the start time in clock ticks since boot. */
    static long startTicksFromStat(String stat) {
        return Long.parseLong(fieldsAfterName(stat)[19]); // f[0] is field 3 (state); field 22 is f[19]
    }

    /** Fields 3 and on of a /proc/PID/stat line. */
    private static String[] fieldsAfterName(String stat) {
        // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
        int close = stat.lastIndexOf(')');
        return stat.substring(close + 2).split(" ");
    }

    /**
     * What /proc/PID/stat says of a process: its state letter (field 3: {@code Z} for a zombie, a
     * process that has exited but not yet been reaped by its parent, {@code X} for one being
     * reaped), its process group (field 5) and its start time in clock ticks since boot (field 22).
     */
    public record ProcStat(char state, long parent, long processGroup, long startTicks) {
        /** True if the process has exited and only its exit status remains (zombie or being reaped): it can run no more. */
        public boolean exited() {
            return state == 'Z' || state == 'X' || state == 'x';
        }
    }

    /**
     * True if a process of process group {@code pgid} can still run, read from /proc: a zombie
     * cannot, and {@code kill(-pgid, 0)} counts zombies as members. True as well when /proc cannot
     * be listed (then it cannot be told).
     */
    public static boolean groupCanRun(long pgid) {
        Optional<Map<Long, Long>> members = runnableMembers(pgid);
        return members.isEmpty() || !members.get().isEmpty();
    }

    /**
     * The processes of group {@code pgid} that can still run (zombies excluded), each with its
     * parent's pid, read from /proc; empty if /proc cannot be listed. The one /proc scan behind
     * {@link #groupCanRun} and the command-line tool's search for what a command left running.
     */
    public static Optional<Map<Long, Long>> runnableMembers(long pgid) {
        Map<Long, Long> parentOf = new HashMap<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"))) {
            for (Path proc : procs) {
                String name = proc.getFileName().toString();
                if (name.isEmpty() || name.charAt(0) < '1' || name.charAt(0) > '9') {
                    continue;
                }
                long member;
                try {
                    member = Long.parseLong(name);
                } catch (NumberFormatException e) {
                    continue;
                }
                Optional<ProcStat> stat = stat(member);
                if (stat.isPresent()
                        && stat.get().processGroup() == pgid
                        && !stat.get().exited()) {
                    parentOf.put(member, stat.get().parent());
                }
            }
            return Optional.of(parentOf);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The /proc/PID/stat of {@code pid}, or empty if there is no such process (or it cannot be read). */
    public static Optional<ProcStat> stat(long pid) {
        if (pid <= 0) {
            return Optional.empty();
        }
        try {
            String[] f = fieldsAfterName(read("/proc/" + pid + "/stat", StandardCharsets.US_ASCII));
            return Optional.of(
                    new ProcStat(f[0].charAt(0), Long.parseLong(f[1]), Long.parseLong(f[2]), Long.parseLong(f[19])));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
