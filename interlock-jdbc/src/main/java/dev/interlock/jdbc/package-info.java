/**
 * The {@code jdbc:} backend: lease locks in a table of PostgreSQL, MySQL/MariaDB, H2 or SQLite.
 * Open it by URI ({@code Interlock.open("jdbc:postgresql://db/app")}) or on an application's
 * {@link javax.sql.DataSource} with {@link dev.interlock.jdbc.JdbcLockSpaces}. The layout, the
 * statements and the guarantees are in docs/jdbc.md.
 */
package dev.interlock.jdbc;
