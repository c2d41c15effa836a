package dev.interlock.cli;

import dev.interlock.check.Section;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The worker processes of {@code interlock verify} on this host: started with the same java and
 * class path as interlock itself, all released at once ({@code GO}), stopped after the duration,
 * and, in a crash test, some of them killed with SIGKILL inside an exclusive section and replaced.
 * See {@link VerifyWorker} for what a worker does and says.
 *
 * <p>Times are this host's monotonic clock ({@code System.nanoTime}, CLOCK_MONOTONIC), the clock
 * the workers record their sections on: a kill is timed just before SIGKILL is sent.
 */
final class VerifyWorkers implements AutoCloseable {
    /** How long a worker may take to start (a JVM and the lock space) before verify gives up. */
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    /** How long workers may take to finish after STOP (a section in progress, a release) before they are killed. */
    private static final Duration STOP_LIMIT = Duration.ofSeconds(15);
    /**
     * Test-only: an executable that starts odd-numbered workers ({@code WRAPPER java ...}), e.g. in
     * another mount namespace where the lock directory is a different directory.
     */
    static final String WRAPPER_PROPERTY = "interlock.verify.test.wrapper";

    /**
     * What the workers need to know: with a {@code limit} above 0 they take permits of a semaphore
     * of that many, and {@code counter} is the directory of their slots ({@link PermitSlots}).
     */
    record Setup(
            String uri,
            String name,
            double sharedRatio,
            long leaseMs,
            Path dir,
            Path counter,
            String host,
            int limit) {}

    /** A worker that failed (bad exit status, or stuck after STOP). */
    record Failure(String worker, int exitCode, String stderr, boolean stuck) {}

    /** What this host's workers did. */
    record Outcome(List<Path> logs, List<Section> killed, List<Failure> failures, long goNanos, long endNanos) {}

    /** Told the state of the run about four times a second. */
    interface Progress {
        void update(long elapsedNanos, long sections, int kills);
    }

    private final Setup setup;
    private final List<String> java;
    private final String wrapper;
    private final List<Worker> workers = new CopyOnWriteArrayList<>();
    private final List<Section> killed = new CopyOnWriteArrayList<>();
    /** Guards the kill order: at most one is open, and it kills the first worker here to enter an exclusive section. */
    private final Object order = new Object();

    private boolean orderOpen;
    private int next;

    VerifyWorkers(Setup setup) {
        this.setup = setup;
        this.java = javaCommand();
        String w = System.getProperty(WRAPPER_PROPERTY);
        this.wrapper = w == null || w.isBlank() ? null : w;
    }

    /**
     * This JVM's java, its class path and the options worth passing on (system properties, GC,
     * stack and class-data sharing settings). Not passed: debugging agents and one-off options,
     * and the launcher's C1-only JIT setting, which suits a short command, not a worker that
     * hammers a lock for seconds (the workers measure the backend, not the JIT).
     */
    static List<String> javaCommand() {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("-D")
                    || a.startsWith("-Xshare:")
                    || a.startsWith("-XX:SharedArchiveFile=")
                    || a.equals("-XX:+UseSerialGC")
                    || a.equals("-XX:-UsePerfData")
                    || a.startsWith("-Xss")
                    || a.startsWith("-Xmn")
                    || a.startsWith("-Xmx")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(VerifyWorker.class.getName());
        return cmd;
    }

    /**
     * Starts {@code n} workers and waits until each has opened the lock space.
     *
     * @throws CliException 69 if a worker cannot use the backend (its own message), 1 if one failed otherwise
     */
    void start(int n) throws InterruptedException {
        List<Worker> started = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            started.add(spawn(false));
        }
        for (Worker w : started) {
            w.awaitReady();
        }
    }

    private Worker spawn(boolean goWhenReady) {
        int index = next++;
        String label = "w" + index + "@" + setup.host();
        Path log = setup.dir().resolve("worker-" + index + ".log");
        Path err = setup.dir().resolve("worker-" + index + ".err");
        List<String> cmd = new ArrayList<>();
        if (wrapper != null && index % 2 == 1) {
            cmd.add(wrapper);
        }
        cmd.addAll(java);
        cmd.addAll(List.of(
                setup.name(),
                Double.toString(setup.sharedRatio()),
                Long.toString(setup.leaseMs()),
                log.toString(),
                setup.counter().toString(),
                label,
                Integer.toString(setup.limit())));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(err.toFile());
        pb.environment().put(VerifyWorker.BACKEND_ENV, setup.uri());
        try {
            Worker w = new Worker(index, label, log, err, pb.start(), goWhenReady);
            workers.add(w);
            return w;
        } catch (IOException e) {
            throw new CliException(
                    ExitCodes.OSERR,
                    "cannot start a worker process (" + cmd.get(0) + "): " + VerifyWorker.reason(e),
                    e);
        }
    }

    /**
     * Releases every worker, runs for {@code duration} (killing {@code kills} holders, each
     * replaced by a new worker), then stops them all.
     *
     * <p>Kill {@code k} is asked for at {@code k/(kills+1)} of the duration, or when kill
     * {@code k-1} is made if that is later: every live worker is told KILLME, the first one to
     * enter an exclusive section is killed there and the others are spared (SPARE). Asking one
     * worker chosen beforehand made fewer kills than announced when that worker did not get the
     * lock before the end (issue 32: 2 of 3 in 15 s across two NFS hosts); a replacement starts
     * without holding up the next kill. A kill still asked for at the end is taken back.
     */
    Outcome run(Duration duration, int kills, Progress progress) throws InterruptedException {
        long go = System.nanoTime();
        for (Worker w : workers) {
            w.send("GO");
        }
        long end = go + duration.toNanos();
        long[] killAt = new long[kills];
        for (int k = 0; k < kills; k++) {
            killAt[k] = go + duration.toNanos() * (k + 1) / (kills + 1);
        }
        int k = 0;
        while (true) {
            long now = System.nanoTime();
            if (now >= end) {
                break;
            }
            if (k < kills && now >= killAt[k] && openOrder()) {
                k++;
            }
            replaceKilled();
            progress.update(now - go, sections(), killed.size());
            long wake = Math.min(end, k < kills ? killAt[k] : end);
            TimeUnit.NANOSECONDS.sleep(Math.max(0, Math.min(wake - System.nanoTime(), 250_000_000L)));
        }
        closeOrder();
        long stopped = System.nanoTime();
        List<Failure> failures = stopAll();
        progress.update(stopped - go, sections(), killed.size());
        List<Path> logs = new ArrayList<>();
        for (Worker w : workers) {
            logs.add(w.log);
        }
        return new Outcome(logs, List.copyOf(killed), failures, go, stopped);
    }

    private long sections() {
        long n = 0;
        for (Worker w : workers) {
            n += w.count;
        }
        return n;
    }

    /**
     * Tells every live worker to stay in its next exclusive section, unless a kill is still asked
     * for; the reader of the first one in kills it there. Returns whether it asked.
     */
    private boolean openOrder() {
        synchronized (order) {
            if (orderOpen) {
                return false;
            }
            orderOpen = true;
            for (Worker w : workers) {
                if (w.running && w.killedAt == 0 && w.process.isAlive()) {
                    w.victim = true;
                    w.send("KILLME");
                }
            }
            return true;
        }
    }

    /** Kills {@code w}, inside {@code section}, if a kill is asked for and it was asked; spares the others. */
    private void killIfOrdered(Worker w, String section) {
        synchronized (order) {
            if (!orderOpen || !w.victim) {
                return; // spared already: SPARE is on its way and it finishes the section
            }
            Section s = Section.parse(w.label, section);
            long at = System.nanoTime();
            w.process.destroyForcibly(); // SIGKILL
            w.killedAt = at;
            killed.add(s.endingAt(at));
            orderOpen = false;
            spareAll();
            if (setup.limit() > 0) {
                giveBackSlot(w, (int) s.read());
            }
        }
    }

    /**
     * Gives back the permit slot of a holder killed inside its section, once it is dead (it
     * cannot: see {@link PermitSlots}); without this, every later holder would find one slot fewer.
     */
    private void giveBackSlot(Worker w, int slot) {
        try {
            if (w.process.waitFor(5, TimeUnit.SECONDS)) {
                new PermitSlots(setup.counter(), setup.limit()).giveBack(slot);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // The holders that find no free slot then say so, naming the killed holder's slot.
        }
    }

    /** Takes back a kill still asked for (the run is over). */
    private void closeOrder() {
        synchronized (order) {
            orderOpen = false;
            spareAll();
        }
    }

    private void spareAll() {
        for (Worker o : workers) {
            if (o.victim && o.killedAt == 0) {
                o.victim = false;
                o.send("SPARE");
            }
        }
    }

    /** Starts a replacement for each killed worker; it starts its loop when it is ready, without holding up the run. */
    private void replaceKilled() {
        for (Worker w : workers) {
            if (w.killedAt != 0 && !w.replaced) {
                w.replaced = true;
                spawn(true);
            }
        }
    }

    private List<Failure> stopAll() throws InterruptedException {
        for (Worker w : workers) {
            w.send("STOP");
        }
        List<Failure> failures = new ArrayList<>();
        long deadline = System.nanoTime() + STOP_LIMIT.toNanos();
        for (Worker w : workers) {
            boolean exited = w.process.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (!exited) {
                w.process.destroyForcibly();
                w.process.waitFor(5, TimeUnit.SECONDS);
                failures.add(new Failure(w.label, -1, w.stderr(), true));
            } else if (w.killedAt == 0 && w.process.exitValue() != 0) {
                failures.add(new Failure(w.label, w.process.exitValue(), w.stderr(), false));
            }
            w.reader.join(TimeUnit.SECONDS.toMillis(5));
        }
        return failures;
    }

    @Override
    public void close() {
        for (Worker w : workers) {
            w.process.destroyForcibly();
        }
        for (Worker w : workers) {
            try {
                w.process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** One worker process and the thread that reads what it says. */
    private final class Worker {
        final int index;
        final String label;
        final Path log;
        final Path err;
        final Process process;
        final OutputStream in;
        final CompletableFuture<Void> ready = new CompletableFuture<>();
        final Thread reader;
        volatile long count;
        volatile boolean running;
        volatile boolean victim;
        volatile long killedAt;
        volatile boolean replaced;
        private final boolean goWhenReady;

        Worker(int index, String label, Path log, Path err, Process process, boolean goWhenReady) {
            this.goWhenReady = goWhenReady;
            this.index = index;
            this.label = label;
            this.log = log;
            this.err = err;
            this.process = process;
            this.in = process.getOutputStream();
            this.reader = new Thread(this::read, "verify-worker-" + index);
            reader.setDaemon(true);
            reader.start();
        }

        private void read() {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.equals("READY")) {
                        ready.complete(null);
                        if (goWhenReady) {
                            send("GO");
                        }
                    } else if (line.startsWith("COUNT ")) {
                        count = Long.parseLong(line.substring(6).trim());
                    } else if (line.startsWith("IN ")) {
                        killIfOrdered(this, line.substring(3));
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the process is gone; its exit status tells the rest
            }
            ready.completeExceptionally(new IllegalStateException("exited"));
        }

        synchronized void send(String command) {
            try {
                in.write((command + "\n").getBytes(StandardCharsets.US_ASCII));
                in.flush();
                if (command.equals("GO")) {
                    running = true;
                }
            } catch (IOException e) {
                // exited: its exit status tells why
            }
        }

        void awaitReady() throws InterruptedException {
            try {
                ready.get(START_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                process.waitFor(5, TimeUnit.SECONDS);
                int code = process.isAlive() ? -1 : process.exitValue();
                String why = stderr();
                if (code == ExitCodes.UNAVAILABLE || code == ExitCodes.USAGE) {
                    throw new CliException(code, why.isEmpty() ? "the worker could not open " + setup.uri() : why);
                }
                throw new CliException(
                        1,
                        "worker " + label + " exited with status " + code + " before it started"
                                + (why.isEmpty() ? "" : ": " + why));
            } catch (TimeoutException e) {
                throw new CliException(
                        1,
                        "worker " + label + " did not start within " + START_LIMIT.toSeconds() + "s"
                                + (stderr().isEmpty() ? "" : ": " + stderr()));
            }
        }

        /** The last lines of what the worker wrote on stderr (its messages say what went wrong). */
        String stderr() {
            try {
                List<String> lines = Files.readAllLines(err, StandardCharsets.UTF_8);
                List<String> tail = lines.subList(Math.max(0, lines.size() - 5), lines.size());
                return String.join("\n", tail).trim();
            } catch (IOException e) {
                return "";
            }
        }
    }
}
