package dev.interlock.spring.boot;

import java.util.List;

/**
 * Start-up failed because of an {@code interlock.*} property: a value Interlock refused, two
 * properties that contradict each other, or a lock space that could not be opened. Carries the
 * names of the properties involved, which {@link InterlockFailureAnalyzer} shows with what to
 * change. Messages never carry a password: URIs are shown masked.
 */
public final class InterlockPropertyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final List<String> properties;
    private final String action;

    InterlockPropertyException(List<String> properties, String message, String action, Throwable cause) {
        super(message, cause);
        this.properties = List.copyOf(properties);
        this.action = action;
    }

    InterlockPropertyException(String property, String message, String action) {
        this(List.of(property), message, action, null);
    }

    /** The properties to look at, e.g. {@code interlock.uri}, {@code interlock.jdbc.table}. */
    public List<String> properties() {
        return properties;
    }

    /** What to change. */
    public String action() {
        return action;
    }
}
