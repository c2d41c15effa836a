package dev.interlock.testkit;

/** What a thread is doing, for tests that must act while a call is held up (on a stopped server, say). */
public final class Stacks {
    private Stacks() {}

    /** True while {@code t} runs code of the class {@code className} (false for a null thread). */
    public static boolean inCall(Thread t, String className) {
        if (t == null) {
            return false;
        }
        for (StackTraceElement f : t.getStackTrace()) {
            if (f.getClassName().equals(className)) {
                return true;
            }
        }
        return false;
    }
}
