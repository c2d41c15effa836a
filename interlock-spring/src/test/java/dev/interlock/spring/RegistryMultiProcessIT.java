package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.check.CheckWorker;
import dev.interlock.check.ExclusionCheck;
import dev.interlock.check.Section;
import dev.interlock.testkit.ChildJvm;
import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.Timing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two JVMs, two threads each, contend for one key through the registry, on every backend of the
 * build (PostgreSQL and Redis started by the test, shared by both JVMs); the core's exclusion check
 * proves from their logs that no two sections overlapped, that fencing tokens increased with
 * acquisition order, and that the shared counter file lost no increment.
 */
class RegistryMultiProcessIT {
    static final int PROCESSES = 2;
    static final int THREADS = 2;
    static final int ITERATIONS = 150;

    @ParameterizedTest
    @ValueSource(strings = {"flock", "dir", "postgres", "redis"})
    void twoJvms_excludeEachOther_throughTheRegistry(String backend, @TempDir Path work) throws Exception {
        Path locks = Files.createDirectory(work.resolve("locks"));
        String uri = switch (backend) {
            case "postgres" -> TestServers.postgresUri();
            case "redis" -> TestServers.redisUri();
            default -> backend + ":" + locks;
        };
        Path counter = work.resolve("counter");
        Files.writeString(counter, "0");
        List<Process> procs = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                Path log = work.resolve("worker-" + i + ".log");
                logs.add(log);
                procs.add(ChildJvm.start(RegistryWorker.class, uri, "spring-job", Integer.toString(THREADS),
                        Integer.toString(ITERATIONS), log.toString(), counter.toString()));
            }
            long deadline = System.nanoTime() + Timing.seconds(120).toNanos();
            for (Process p : procs) {
                long left = deadline - System.nanoTime();
                assertThat(p.waitFor(Math.max(left, 0), TimeUnit.NANOSECONDS)).as("worker finished in time").isTrue();
                assertThat(p.exitValue()).as("worker exit status").isZero();
            }
        } finally {
            for (Process p : procs) {
                p.destroyForcibly();
            }
        }
        List<Section> all = ExclusionChecker.sections(logs);
        assertThat(all).as("critical sections logged").hasSize(PROCESSES * THREADS * ITERATIONS);
        ExclusionCheck.Report r = ExclusionCheck.check(all, 0, CheckWorker.read(counter));
        assertThat(r.violations()).as("exclusion, counter and token violations").isEmpty();
        assertThat(r.exclusive()).isEqualTo(PROCESSES * THREADS * ITERATIONS);
    }
}
