package dev.interlock.cli;

import dev.interlock.testkit.Timing;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** {@code interlock} run as a real process: {@code java -cp <test class path> dev.interlock.cli.Main ...}. */
final class CliProcess implements AutoCloseable {
    final Process process;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final List<Thread> pumps = new ArrayList<>();

    private CliProcess(Process process) {
        this.process = process;
        pumps.add(pump(process.getInputStream(), out));
        pumps.add(pump(process.getErrorStream(), err));
    }

    /**
     * {@code -Dinterlock.cli.jar=interlock-cli/target/interlock.jar} runs the tests against the
     * shaded jar, as shipped, instead of the test class path: what checks that the shade filters
     * left out nothing a command loads (docs/zookeeper.md, the command-line jar).
     */
    private static ProcessBuilder builder(List<String> jvmArgs, String... args) {
        ProcessBuilder pb = dev.interlock.testkit.ChildJvm.builder(Main.class, jvmArgs, args);
        String jar = System.getProperty("interlock.cli.jar");
        if (jar != null && !jar.isEmpty()) {
            List<String> cmd = new ArrayList<>(pb.command());
            cmd.set(cmd.indexOf("-cp") + 1, jar);
            pb.command(cmd);
        }
        return pb;
    }

    static CliProcess start(List<String> jvmArgs, Map<String, String> env, String... args) throws IOException {
        ProcessBuilder pb = builder(jvmArgs, args);
        pb.environment().putAll(env);
        return new CliProcess(pb.start());
    }

    /** Runs interlock's JVM through {@code prefix} (e.g. {@code unshare ... sh -c '...' ...}), which must exec it. */
    static CliProcess startWrapped(List<String> prefix, List<String> jvmArgs, String... args) throws IOException {
        ProcessBuilder pb = builder(jvmArgs, args);
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(pb.command());
        pb.command(cmd);
        return new CliProcess(pb.start());
    }

    static CliProcess start(String... args) throws IOException {
        return start(List.of(), Map.of(), args);
    }

    private static Thread pump(InputStream in, ByteArrayOutputStream sink) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[4096];
                    try {
                        int n;
                        while ((n = in.read(buf)) > 0) {
                            synchronized (sink) {
                                sink.write(buf, 0, n);
                            }
                        }
                    } catch (IOException e) {
                        // process gone
                    }
                },
                "pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits for the exit (bounded) and returns the status. */
    int exitCode() throws InterruptedException {
        return exitCode(Timing.seconds(30));
    }

    int exitCode(Duration limit) throws InterruptedException {
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("interlock did not exit within " + limit + "; stderr: " + err());
        }
        // Let the pumps drain what was written (a child that outlives interlock may keep the pipes open).
        for (Thread t : pumps) {
            t.join(Timing.seconds(5).toMillis());
        }
        return process.exitValue();
    }

    String out() {
        synchronized (out) {
            return out.toString(StandardCharsets.UTF_8);
        }
    }

    byte[] outBytes() {
        synchronized (out) {
            return out.toByteArray();
        }
    }

    String err() {
        synchronized (err) {
            return err.toString(StandardCharsets.UTF_8);
        }
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }
}
