package dev.interlock.cli;

import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code interlock list [--backend URI] [--json | --names]}. */
@Command(
        mixinStandardHelpOptions = true,
        name = "list",
        header = "List the locks of a lock space and their holders.",
        description = {
            "",
            "Every name the backend knows of (held, or used before and left a trace, such as",
            "a lock file), sorted, with the same columns as 'interlock status'. Creates",
            "nothing: a lock space that does not exist yet is exit 69."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {"  interlock list", "  interlock list --json --backend flock:/var/lock/myapp"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:the list was shown",
            "64:usage error (bad option or URI)",
            "69:the backend is unusable or unreachable, or there is no lock space there"
        })
final class ListCommand implements Callable<Integer> {
    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    BackendOption backend;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Option(names = "--names", description = "Print only the names, one a line (for scripts and shell completion).")
    boolean names;

    @Mixin
    Verbosity verbosity;

    @Override
    public Integer call() {
        if (json && names) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--json and --names exclude each other");
        }
        try (LockSpace space = backend.open(top.env, false)) {
            List<LockInfo> locks = space.list();
            PrintWriter out = spec.commandLine().getOut();
            if (names) {
                // A name has no control characters (LockNames), so one a line is unambiguous.
                for (LockInfo info : locks) {
                    out.println(info.name());
                }
                out.flush();
            } else {
                StatusCommand.print(out, space.uri(), locks, json);
            }
        }
        return ExitCodes.OK;
    }
}
