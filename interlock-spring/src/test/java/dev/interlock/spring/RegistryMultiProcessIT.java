package dev.interlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.ExclusionChecker;
import dev.interlock.testkit.MultiProcessChecker;
import java.nio.file.Files;
import java.nio.file.Path;
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
        int sections = PROCESSES * THREADS * ITERATIONS;
        ExclusionChecker.Report r = MultiProcessChecker.run(
                RegistryWorker.class,
                PROCESSES,
                sections,
                work,
                uri,
                "spring-job",
                Integer.toString(THREADS),
                Integer.toString(ITERATIONS));
        assertThat(r.exclusive()).isEqualTo(sections);
    }
}
