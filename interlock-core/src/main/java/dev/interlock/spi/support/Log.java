package dev.interlock.spi.support;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The logger of Interlock's own classes and of backends that want its start-up saving, an slf4j {@link Logger} made when something
 * is first logged rather than when the class loads.
 *
 * <p>In an application slf4j is running already and this changes nothing. In a process that lives
 * for one command (the command-line tool) starting slf4j is a large part of the start (its
 * provider, its configuration, {@code java.util.Formatter}: about 10 ms of a 75 ms {@code run} on
 * JDK 17, docs/benchmarks.md), and a normal {@code run} logs nothing at the level the tool shows.
 * A host that set slf4j's level itself and knows debug and info are off says so with
 * {@link #belowWarningsOff()}: those calls then return without starting slf4j.
 */
public final class Log {
    private static volatile boolean belowWarningsOff;

    private final String name;
    private volatile Logger logger;

    private Log(String name) {
        this.name = name;
    }

    /** The logger named after {@code owner}, as {@code LoggerFactory.getLogger(owner)}. */
    public static Log of(Class<?> owner) {
        return new Log(owner.getName());
    }

    /**
     * Says that debug and info messages are shown nowhere in this process (the command-line tool
     * without {@code --verbose}): from then on, for the life of the process, they are dropped here,
     * and slf4j starts only for a warning.
     */
    public static void belowWarningsOff() {
        belowWarningsOff = true;
    }

    public boolean isDebugEnabled() {
        return !belowWarningsOff && logger().isDebugEnabled();
    }

    /** As slf4j's: {@code {}} placeholders, and a last argument that is a Throwable is logged with its trace. */
    public void debug(String format, Object... args) {
        if (!belowWarningsOff) {
            logger().debug(format, args);
        }
    }

    /** As {@link #debug(String, Object...)} without an array (acquire and release log through these). */
    public void debug(String format, Object arg) {
        if (!belowWarningsOff) {
            logger().debug(format, arg);
        }
    }

    public void debug(String format, Object arg1, Object arg2) {
        if (!belowWarningsOff) {
            logger().debug(format, arg1, arg2);
        }
    }

    public void info(String format, Object... args) {
        if (!belowWarningsOff) {
            logger().info(format, args);
        }
    }

    public void warn(String format, Object... args) {
        logger().warn(format, args);
    }

    public void error(String format, Object... args) {
        logger().error(format, args);
    }

    private Logger logger() {
        Logger l = logger;
        if (l == null) {
            // A race makes it twice: slf4j hands out the same logger for a name.
            l = LoggerFactory.getLogger(name);
            logger = l;
        }
        return l;
    }
}
