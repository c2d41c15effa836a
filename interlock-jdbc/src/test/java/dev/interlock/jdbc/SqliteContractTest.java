package dev.interlock.jdbc;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import dev.interlock.testkit.LockSpaceContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;

/** The backend contract on a SQLite database file, one per test. */
class SqliteContractTest extends LockSpaceContract {
    private final Path file;

    SqliteContractTest() {
        try {
            file = Files.createTempFile("interlock-sqlite", ".db");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected LockSpace openSpace() {
        return Interlock.open("jdbc:sqlite:" + file + "?create=true");
    }

    @AfterEach
    void removeFile() throws IOException {
        Files.deleteIfExists(file);
        Files.deleteIfExists(Path.of(file + "-journal"));
    }
}
