package dev.interlock;

/** A lock name broke one of the rules in {@link LockSpace}; the message names the rule. */
public class InvalidLockNameException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String name;

    public InvalidLockNameException(String name, String message) {
        super(message);
        this.name = name;
    }

    /** The rejected name (may contain the offending characters). */
    public String name() {
        return name;
    }
}
