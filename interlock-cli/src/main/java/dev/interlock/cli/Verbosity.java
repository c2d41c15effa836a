package dev.interlock.cli;

import picocli.CommandLine.Option;

/** {@code -v/--verbose}, accepted by every command. Read by {@link Main} before any logger exists. */
final class Verbosity {
    @Option(
            names = {"-v", "--verbose"},
            description = "Log what happens (debug level) and show stack traces of errors.")
    boolean verbose;
}
