package dev.interlock.jdbc;

import java.util.regex.Pattern;

/**
 * The lock table's name, the one piece of SQL text that comes from configuration. It is pasted
 * into statements (identifiers cannot be bound), so it must be a plain identifier: a letter or
 * underscore, then letters, digits and underscores, short enough that the derived names
 * ({@code <table>_shared}, the LISTEN channel {@code interlock_<table>}) fit PostgreSQL's
 * 63-byte identifiers. It is never quoted, so each database folds its case its usual way.
 */
final class TableName {
    static final int MAX_LENGTH = 48;
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private TableName() {}

    /**
     * @throws IllegalArgumentException naming the rule if {@code table} is not a plain identifier
     */
    static String validate(String table) {
        if (table == null || table.isEmpty()) {
            throw new IllegalArgumentException("the lock table name must not be empty");
        }
        if (table.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("the lock table name '" + table + "' is " + table.length()
                    + " characters long; the limit is " + MAX_LENGTH);
        }
        if (!PLAIN.matcher(table).matches()) {
            throw new IllegalArgumentException(
                    "the lock table name '" + table
                            + "' must be a plain identifier: a letter or '_', then letters, digits or '_' (no quotes, dots or spaces)");
        }
        return table;
    }
}
