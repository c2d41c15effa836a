package dev.interlock.cli;

import java.io.PrintWriter;

/** The live line on a terminal's stderr ({@code \r}-rewritten); nothing at all when stderr is not a terminal. */
final class VerifyProgress {
    private final PrintWriter err;
    private final boolean enabled;
    private int shown;

    VerifyProgress(PrintWriter err, boolean enabled) {
        this.err = err;
        this.enabled = enabled;
    }

    synchronized void show(String line) {
        if (!enabled) {
            return;
        }
        String l = line.length() > 79 ? line.substring(0, 79) : line;
        err.print("\r" + l + " ".repeat(Math.max(0, shown - l.length())));
        err.flush();
        shown = l.length();
    }

    synchronized void clear() {
        if (enabled && shown > 0) {
            err.print("\r" + " ".repeat(shown) + "\r");
            err.flush();
            shown = 0;
        }
    }
}
