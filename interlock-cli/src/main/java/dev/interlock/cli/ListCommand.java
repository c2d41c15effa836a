package dev.interlock.cli;

import dev.interlock.LockSpace;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code interlock list [--backend URI] [--json]}. */
@Command(mixinStandardHelpOptions = true,
        name = "list",
        header = "List the locks of a lock space and their holders.",
        description = {"",
                "Every name the backend knows of (held, or used before and left a trace, such as",
                "a lock file), sorted, with the same columns as 'interlock status'. Creates",
                "nothing: a lock space that does not exist yet is exit 69."},
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {"  interlock list",
                "  interlock list --json --backend flock:/var/lock/myapp"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                " 0:the list was shown",
                "64:usage error (bad option or URI)",
                "69:the backend is unusable or unreachable, or there is no lock space there"})
final class ListCommand implements Callable<Integer> {
    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    BackendOption backend;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    @Mixin
    Verbosity verbosity;

    @Override
    public Integer call() {
        try (LockSpace space = backend.open(top.env, false)) {
            StatusCommand.print(spec.commandLine().getOut(), space.uri(), space.list(), json);
        }
        return ExitCodes.OK;
    }
}
