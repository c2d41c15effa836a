package dev.interlock;

import java.util.Objects;

/**
 * A typed option of a lock space, declared by a backend (for example a {@code DataSource} to use,
 * or a client instance of the application's) and given with
 * {@link Interlock.Builder#option(Option, Object)}. Options are compared by identity: use the
 * constants a backend publishes.
 *
 * @param <T> the type of the value
 */
public final class Option<T> {
    private final String name;
    private final Class<T> type;

    private Option(String name, Class<T> type) {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
    }

    /** A new option; {@code name} is for messages, e.g. {@code "jdbc.dataSource"}. */
    public static <T> Option<T> of(String name, Class<T> type) {
        return new Option<>(name, type);
    }

    public String name() {
        return name;
    }

    public Class<T> type() {
        return type;
    }

    /** The value, checked against the type. */
    T cast(Object value) {
        if (!type.isInstance(value)) {
            throw new IllegalArgumentException("option " + name + " takes a " + type.getName() + ", not a "
                    + (value == null ? "null" : value.getClass().getName()));
        }
        return type.cast(value);
    }

    @Override
    public String toString() {
        return name;
    }
}
