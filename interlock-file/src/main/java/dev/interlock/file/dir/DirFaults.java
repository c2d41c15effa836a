package dev.interlock.file.dir;

/**
 * Fault injection for tests: with {@code -Dinterlock.dir.crashAt=STEP} the process halts
 * (like {@code kill -9}: no cleanup, no shutdown hooks) right after protocol step STEP, leaving
 * the lock directory exactly as a crash there would. Steps are named in docs/dir-protocol.md:
 * {@code E1} (writer took the gate), {@code S1} (reader took a token), {@code S2} (reader
 * heartbeat created), {@code S3} (reader entry created), {@code S4} (reader heartbeat removed on
 * release), {@code Q1} (waiter entry created), {@code P1} (permit took a token), {@code P2} (permit
 * heartbeat and entry created). Tests cut this process off from every lock
 * directory with {@code NativeFiles.cutOff} (in the module's facade over the natives).
 */
final class DirFaults {
    private static final String CRASH_AT = System.getProperty("interlock.dir.crashAt");
    static final int EXIT_CODE = 86;

    /** Tests only: called at every step by the thread that made it (to hold one contender there while others pass). */
    static volatile java.util.function.Consumer<String> onStep;

    private DirFaults() {}

    static void step(String step) {
        java.util.function.Consumer<String> hook = onStep;
        if (hook != null) {
            hook.accept(step);
        }
        if (CRASH_AT != null && CRASH_AT.equals(step)) {
            System.out.flush();
            Runtime.getRuntime().halt(EXIT_CODE);
        }
    }
}
