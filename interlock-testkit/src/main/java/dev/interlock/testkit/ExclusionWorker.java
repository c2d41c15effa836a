package dev.interlock.testkit;

import dev.interlock.check.CheckWorker;

/**
 * A worker process for {@link MultiProcessChecker}: the core's {@link dev.interlock.check.CheckWorker}
 * (kept under this name for the tests that start it).
 *
 * <p>Arguments: {@code URI NAME MODES ITERATIONS LOG COUNTER}, MODES being {@code ex}, {@code sh}
 * or {@code mixed} (about one exclusive in three).
 */
public final class ExclusionWorker {
    private ExclusionWorker() {}

    public static void main(String[] args) throws Exception {
        CheckWorker.main(args);
    }
}
