package dev.interlock.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The time rules on SQLite. */
class SqliteSemanticsTest extends JdbcSemanticsContract {
    private final Path file;

    SqliteSemanticsTest() {
        try {
            file = Files.createTempFile("interlock-sqlite", ".db");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected String baseUrl() {
        return "jdbc:sqlite:" + file;
    }

    @Override
    protected void afterClose() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
