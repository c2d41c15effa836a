package dev.interlock.cli;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/** The {@code -- COMMAND [ARG...]} part shared by {@code run} and {@code update}. */
final class AfterDash {
    private AfterDash() {}

    /**
     * The number of arguments after this subcommand's {@code --}.
     *
     * @throws CommandLine.ParameterException (exit 64) if there is no {@code --} or nothing after it
     */
    static int count(CommandSpec spec, String synopsis) {
        List<String> original = spec.commandLine().getParseResult().originalArgs();
        int at = original.indexOf(spec.name());
        List<String> mine = at >= 0 ? original.subList(at + 1, original.size()) : original;
        int dash = mine.indexOf("--");
        if (dash < 0) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "missing '--' before the command: " + synopsis);
        }
        int after = mine.size() - dash - 1;
        if (after == 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "missing COMMAND after '--': " + synopsis);
        }
        return after;
    }
}
