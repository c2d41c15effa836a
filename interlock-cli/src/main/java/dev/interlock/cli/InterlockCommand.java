package dev.interlock.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The top command: {@code interlock run|update|status|list|break|verify|help}. */
@Command(
        name = "interlock",
        mixinStandardHelpOptions = true,
        versionProvider = InterlockCommand.Version.class,
        header = "Named locks across processes and hosts: run a command under a lock.",
        synopsisSubcommandLabel = "COMMAND",
        description = {
            "",
            "The lock space is chosen with --backend URI (or $INTERLOCK_BACKEND); by",
            "default it is flock: on a private per-user directory, so",
            "'interlock run NAME -- CMD' works with no setup."
        },
        optionListHeading = "%nOptions:%n",
        commandListHeading = "%nCommands:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  interlock run nightly -- ./report.sh",
            "  interlock run -n -E 3 --backend flock:/var/lock/myapp import -- ./import.sh",
            "  interlock update counter.txt -- sh -c 'read n; echo $(($${n:-0} + 1))'", // $${ is picocli's literal ${
            "  interlock status nightly",
            "  interlock list --json",
            "  interlock verify --backend dir:/mnt/shared/locks",
            "",
            "Run 'interlock help COMMAND' for the options and exit codes of each command."
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:success (run: the command's own status)",
            " 1:run, update: the lock is busy (-n) or the wait ran out (-w); see -E",
            " 2:verify: mutual exclusion was violated",
            "64:usage error (bad option, duration, lock name or URI)",
            "69:the backend is unusable or unreachable",
            "70:internal error (a bug; rerun with -v and report it)",
            "75:run: the lock was lost while the command ran; the command was stopped"
        })
final class InterlockCommand implements Callable<Integer> {
    final Env env;
    /** The raw bytes of the whole argument list, or null (see {@link RawArgs}). */
    final List<byte[]> rawArgs;

    @Spec
    CommandSpec spec;

    @Mixin
    Verbosity verbosity;

    InterlockCommand(Env env, List<byte[]> rawArgs) {
        this.env = env;
        this.rawArgs = rawArgs;
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(
                spec.commandLine(), "missing command: run, update, status, list, break, verify, completion or help");
    }

    /** The version from the jar manifest, or "development build". */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = InterlockCommand.class.getPackage().getImplementationVersion();
            return new String[] {
                "interlock " + (v != null ? v : "(development build)"),
                "Java " + System.getProperty("java.version") + " on " + System.getProperty("os.name") + " "
                        + System.getProperty("os.arch")
            };
        }
    }
}
