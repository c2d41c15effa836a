package dev.interlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.check.CheckWorker;
import dev.interlock.check.ExclusionCheck;
import dev.interlock.check.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs N {@link ExclusionWorker} processes against one lock name and proves, with
 * the core's {@link ExclusionCheck}, that exclusion held and tokens increased: by the counter rules
 * (the lost-update counter kept exactly one increment per exclusive section, values and tokens agree)
 * and by the interval rules on this host's clock.
 */
public final class MultiProcessChecker {
    private MultiProcessChecker() {}

    public static ExclusionChecker.Report run(
            String uri, String name, String modes, int processes, int iterations, Path work)
            throws IOException, InterruptedException {
        return run(
                ExclusionWorker.class,
                processes,
                processes * iterations,
                work,
                uri,
                name,
                modes,
                Integer.toString(iterations));
    }

    /**
     * Runs {@code processes} JVMs of {@code worker}, each given {@code args} followed by its own
     * log file and the shared counter file, waits for them (2 minutes at most), and checks their
     * logs: {@code sections} critical sections in all, no exclusion, counter or token violation.
     * For workers of other modules (an adapter's own worker) that log sections as
     * {@link dev.interlock.check.CheckWorker} does.
     */
    public static ExclusionChecker.Report run(Class<?> worker, int processes, int sections, Path work, String... args)
            throws IOException, InterruptedException {
        Path counter = work.resolve("counter");
        Files.writeString(counter, "0");
        List<Process> procs = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < processes; i++) {
                Path log = work.resolve("worker-" + i + ".log");
                logs.add(log);
                String[] all = Arrays.copyOf(args, args.length + 2);
                all[args.length] = log.toString();
                all[args.length + 1] = counter.toString();
                procs.add(ChildJvm.start(worker, all));
            }
            long deadline = System.nanoTime() + Timing.seconds(120).toNanos();
            for (Process p : procs) {
                long left = deadline - System.nanoTime();
                assertThat(p.waitFor(Math.max(left, 0), TimeUnit.NANOSECONDS))
                        .as("worker finished in time")
                        .isTrue();
                assertThat(p.exitValue()).as("worker exit status").isZero();
            }
        } finally {
            for (Process p : procs) {
                p.destroyForcibly();
            }
        }
        List<Section> all = ExclusionChecker.sections(logs);
        assertThat(all).as("critical sections logged").hasSize(sections);
        ExclusionCheck.Report r = ExclusionCheck.check(all, 0, CheckWorker.read(counter));
        assertThat(r.violations()).as("exclusion, counter and token violations").isEmpty();
        return ExclusionChecker.Report.of(r);
    }
}
