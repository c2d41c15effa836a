package dev.interlock.cli;

import dev.interlock.check.Section;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The records one host of a verify run leaves in its directory, written there and read back for
 * {@link VerifyReport}: {@code worker-N.log} (its workers' sections, see {@link VerifyWorker}),
 * {@code kills.log} (sections whose holder verify killed, each ending at the kill) and
 * {@code host} (who it was, how long it ran, which workers failed), written last and atomically,
 * so that its presence says the host is done.
 */
final class VerifyHostLog {
    private VerifyHostLog() {}

    private static final String HOST_FILE = "host";
    private static final String KILLS_FILE = "kills.log";
    private static final Pattern WORKER_LOG = Pattern.compile("worker-(\\d+)\\.log");

    /** A wait that had not ended when the worker was stopped. */
    record Wait(String source, long nanos) {}

    /** What one host recorded. */
    record HostLog(
            String host,
            String clock,
            int processes,
            long runNanos,
            List<Section> sections,
            List<Section> killed,
            List<Wait> unfinished,
            List<String> torn,
            int lostLeases,
            List<VerifyWorkers.Failure> failures,
            List<PermitCheck.FullSlots> full) {}

    /** Writes the {@code host} file and the kills of one host's run into its directory. */
    static void write(Path dir, String host, String clock, int processes, VerifyWorkers.Outcome o) throws IOException {
        StringBuilder k = new StringBuilder();
        for (Section s : o.killed()) {
            k.append(encode(s.source())).append(' ').append(s.format()).append('\n');
        }
        Files.writeString(dir.resolve(KILLS_FILE), k.toString(), StandardCharsets.UTF_8);
        StringBuilder h = new StringBuilder("interlock-verify-host 1\n");
        h.append("host ").append(encode(host)).append('\n');
        h.append("clock ").append(clock).append('\n');
        h.append("processes ").append(processes).append('\n');
        h.append("run ").append(o.endNanos() - o.goNanos()).append('\n');
        for (VerifyWorkers.Failure f : o.failures()) {
            h.append("failure ")
                    .append(encode(f.worker()))
                    .append(' ')
                    .append(f.exitCode())
                    .append(' ')
                    .append(f.stuck())
                    .append(' ')
                    .append(encode(f.stderr().isEmpty() ? "-" : f.stderr()))
                    .append('\n');
        }
        Path tmp = dir.resolve(HOST_FILE + ".tmp");
        Files.writeString(tmp, h.toString(), StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(HOST_FILE), StandardCopyOption.ATOMIC_MOVE);
    }

    static boolean done(Path dir) {
        return Files.exists(dir.resolve(HOST_FILE));
    }

    /** Reads a host's directory (see the class comment). */
    static HostLog read(Path dir) throws IOException {
        String host = dir.getFileName().toString();
        String clock = "-";
        int processes = 0;
        long run = 0;
        List<VerifyWorkers.Failure> failures = new ArrayList<>();
        for (String line : Files.readAllLines(dir.resolve(HOST_FILE), StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "host":
                    host = decode(f[1]);
                    break;
                case "clock":
                    clock = f[1];
                    break;
                case "processes":
                    processes = Integer.parseInt(f[1]);
                    break;
                case "run":
                    run = Long.parseLong(f[1]);
                    break;
                case "failure":
                    String err = decode(f[4]);
                    failures.add(new VerifyWorkers.Failure(
                            decode(f[1]),
                            Integer.parseInt(f[2]),
                            err.equals("-") ? "" : err,
                            Boolean.parseBoolean(f[3])));
                    break;
                default:
                    break;
            }
        }
        List<Section> sections = new ArrayList<>();
        List<Wait> unfinished = new ArrayList<>();
        List<String> torn = new ArrayList<>();
        List<PermitCheck.FullSlots> full = new ArrayList<>();
        int lost = 0;
        List<Path> logs = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "worker-*.log")) {
            ds.forEach(logs::add);
        }
        logs.sort(null);
        for (Path log : logs) {
            Matcher m = WORKER_LOG.matcher(log.getFileName().toString());
            if (!m.matches()) {
                continue;
            }
            String source = "w" + m.group(1) + "@" + host;
            for (String line : Files.readAllLines(log, StandardCharsets.US_ASCII)) {
                if (line.isBlank()) {
                    continue;
                }
                if (line.startsWith("# waiting ")) {
                    String[] f = line.split(" ");
                    unfinished.add(new Wait(source, Long.parseLong(f[3]) - Long.parseLong(f[2])));
                } else if (line.startsWith("# torn ")) {
                    torn.add(source + " read '" + line.substring(line.indexOf('\'') + 1, line.length() - 1)
                            + "' from the counter (token " + line.split(" ")[2] + ")");
                } else if (line.startsWith("# full ")) {
                    String[] f = line.split(" ", 4);
                    full.add(new PermitCheck.FullSlots(
                            source, Long.parseLong(f[2]), f.length > 3 ? List.of(f[3].split("\\|")) : List.of()));
                } else if (line.startsWith("# lost ")) {
                    lost++;
                } else if (!line.startsWith("#")) {
                    sections.add(Section.parse(source, line));
                }
            }
        }
        List<Section> killed = new ArrayList<>();
        Path kills = dir.resolve(KILLS_FILE);
        if (Files.exists(kills)) {
            for (String line : Files.readAllLines(kills, StandardCharsets.UTF_8)) {
                int sp = line.indexOf(' ');
                if (sp > 0) {
                    killed.add(Section.parse(decode(line.substring(0, sp)), line.substring(sp + 1)));
                }
            }
        }
        return new HostLog(host, clock, processes, run, sections, killed, unfinished, torn, lost, failures, full);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }
}
