package dev.interlock.cli;

import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code interlock status [--backend URI] [--json] NAME...}. */
@Command(
        mixinStandardHelpOptions = true,
        name = "status",
        header = "Show who holds the named locks.",
        description = {
            "",
            "For each NAME: its holders (mode, owner, host, pid, since when, lease left,",
            "fencing token) and the waiters the backend knows of, or 'free'. Reading the",
            "state never changes it and creates nothing: a lock space that does not exist",
            "yet is exit 69, not 'free'. A util-linux flock(1) holder shows its pid only."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {"  interlock status nightly", "  interlock status --json --backend flock:/var/lock/myapp db import"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:the state was shown (whether the locks are free or held)",
            "64:usage error (bad option, lock name or URI)",
            "69:the backend is unusable or unreachable, or there is no lock space there"
        })
final class StatusCommand implements Callable<Integer> {
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

    @Parameters(arity = "1..*", paramLabel = "NAME", description = "Lock names.")
    List<String> names = new ArrayList<>();

    @Override
    public Integer call() {
        return execute(spec.commandLine().getOut());
    }

    /** Shows the locks once the fields are set, by picocli ({@link #call}) or by {@link FastPath}. */
    int execute(PrintWriter out) {
        for (String n : names) {
            BackendOption.checkName(n);
        }
        try (LockSpace space = backend.open(top.env, false)) {
            List<LockInfo> infos = new ArrayList<>();
            for (String n : names) {
                infos.add(space.status(n));
            }
            print(out, space.uri(), infos, json);
        }
        return ExitCodes.OK;
    }

    static void print(PrintWriter out, String uri, List<LockInfo> infos, boolean json) {
        Instant now = Instant.now();
        if (json) {
            out.println(LockTable.json(uri, infos, now));
        } else {
            out.print(LockTable.table(infos, now));
        }
        out.flush();
    }
}
