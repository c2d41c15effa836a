package dev.interlock.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code interlock completion bash|zsh}: prints the shell completion script ({@link CompletionScript}). */
@Command(
        mixinStandardHelpOptions = true,
        name = "completion",
        header = "Print the shell completion script for bash or zsh.",
        description = {
            "",
            "Completes commands, options, the schemes of --backend and, wherever a lock",
            "NAME goes, the names of the lock space the line names (from 'interlock list",
            "--names'). One script serves both shells (zsh through its bashcompinit).",
            "The release tarball also installs it as",
            "share/bash-completion/completions/interlock."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        footerHeading = "%nExamples:%n",
        footer = {
            "  # this shell only",
            "  source <(interlock completion bash)",
            "  # every new bash (~/.bashrc) or zsh (~/.zshrc)",
            "  echo 'source <(interlock completion bash)' >> ~/.bashrc",
            "  echo 'source <(interlock completion zsh)' >> ~/.zshrc"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {" 0:the script was printed", "64:usage error (a shell other than bash or zsh)"})
final class CompletionCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    Verbosity verbosity;

    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh.")
    String shell;

    @Override
    public Integer call() {
        if (!shell.equals("bash") && !shell.equals("zsh")) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "no completion for '" + shell + "': use bash or zsh");
        }
        spec.commandLine().getOut().print(CompletionScript.read());
        spec.commandLine().getOut().flush();
        return ExitCodes.OK;
    }
}
