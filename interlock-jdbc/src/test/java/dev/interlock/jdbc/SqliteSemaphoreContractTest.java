package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.SemaphoreContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The semaphore contract on a SQLite database file, one per test (removed after the class). */
class SqliteSemaphoreContractTest extends SemaphoreContract {
    private static Path dir;
    private final Path file;

    @BeforeAll
    static void makeDir() throws IOException {
        dir = Files.createTempDirectory("interlock-sqlite-sem");
    }

    @AfterAll
    static void removeDir() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                Files.delete(p);
            }
        }
        Files.delete(dir);
    }

    SqliteSemaphoreContractTest() {
        try {
            file = Files.createTempFile(dir, "semaphores", ".db");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("jdbc:sqlite:" + file + "?create=true");
    }
}
