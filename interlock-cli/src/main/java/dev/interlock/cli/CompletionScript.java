package dev.interlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * The bash and zsh completion script, written by the build ({@link #main}) from the command model
 * by picocli's {@link AutoComplete}: commands, options, the schemes of {@code --backend}, and
 * the lock names of the lock space the line names ({@code interlock list --names}) wherever a
 * NAME goes. {@code interlock completion bash|zsh} prints it from the jar; the release tarball
 * installs it as {@code share/bash-completion/completions/interlock}.
 */
public final class CompletionScript {
    private CompletionScript() {}

    static final String RESOURCE = "completion/interlock.bash";

    /** What {@code --backend} completes to: the scheme of each backend the tool bundles. */
    static final List<String> SCHEMES =
            List.of("flock:", "dir:", "jdbc:postgresql:", "jdbc:mariadb:", "redis://", "rediss://", "mem:");

    /** Stands for "the lock names" in the candidates picocli writes, replaced by a call to {@link #LOCK_NAMES}. */
    private static final String MARK = "__interlock_lock_names__";

    /**
     * What the script adds to picocli's: the lock names of the space the line names, escaped as
     * picocli's compReplyArray escapes candidates, and the entry point that gives picocli's
     * functions the words as the user sees them (bash splits a URI at its colon).
     */
    private static final String LOCK_NAMES = "\n"
            + "# The words of the line up to the cursor, split at blanks only, into line_words: bash splits\n"
            + "# 'flock:/x' into three words at the colon (COMP_WORDBREAKS), zsh does not.\n"
            + "function _interlock_words() {\n"
            + "  if [[ -n ${ZSH_VERSION-} ]]; then\n"
            + "    line_words=( \"${COMP_WORDS[@]:0:$(( COMP_CWORD + 1 ))}\" )\n"
            + "  else\n"
            + "    local line=${COMP_LINE:0:$COMP_POINT}\n"
            + "    read -r -a line_words <<< \"$line\"\n"
            + "    if [[ ${#line_words[@]} -eq 0 || $line =~ [[:space:]]$ ]]; then line_words+=(\"\"); fi\n"
            + "  fi\n"
            + "}\n"
            + "\n"
            + "# Lock names of the lock space this command line names (its --backend, else what the command\n"
            + "# would use), as 'interlock list --names' prints them; nothing after '--' or if it cannot be read.\n"
            + "function _interlock_lock_names() {\n"
            + "  local -a line_words backend\n"
            + "  local i\n"
            + "  _interlock_words\n"
            + "  for (( i=1; i<${#line_words[@]}-1; i++ )); do\n"
            + "    case ${line_words[i]} in\n"
            + "      --) return ;; # COMMAND's arguments, not a lock name\n"
            + "      --backend) backend=(--backend \"${line_words[i+1]}\") ;;\n"
            + "      --backend=*) backend=(\"${line_words[i]}\") ;;\n"
            + "    esac\n"
            + "  done\n"
            + "  local IFS=$'\\n'\n"
            + "  local -a names\n"
            + "  names=( $(\"${COMP_WORDS[0]}\" list --names \"${backend[@]}\" 2>/dev/null) )\n"
            + "  (( ${#names[@]} )) && compReplyArray \"${names[@]}\"\n"
            + "}\n"
            + "\n"
            + "# picocli's functions count words: give them the line split at blanks, and strip from each\n"
            + "# candidate what bash keeps before the last colon of the word.\n"
            + "function _interlock_complete() {\n"
            + "  local -a line_words\n"
            + "  _interlock_words\n"
            + "  local COMP_WORDS=(\"${line_words[@]}\") COMP_CWORD=$(( ${#line_words[@]} - 1 ))\n"
            + "  _complete_interlock\n"
            + "  local ret=$? curr_word=${line_words[${#line_words[@]}-1]} i\n"
            + "  if [[ $curr_word == *:* && ${COMP_WORDBREAKS-} == *:* ]]; then\n"
            + "    local kept=${curr_word%\"${curr_word##*:}\"}\n"
            + "    for (( i=0; i<${#COMPREPLY[@]}; i++ )); do COMPREPLY[i]=${COMPREPLY[i]#\"$kept\"}; done\n"
            + "  fi\n"
            + "  return $ret\n"
            + "}\n"
            + "complete -F _interlock_complete -o default interlock\n";

    /** The script, as the build writes it. */
    static String generate() {
        CommandLine top = Main.commandLine(Env.system(), null);
        for (CommandLine sub : top.getSubcommands().values()) {
            addCandidates(sub.getCommandSpec());
        }
        String script = AutoComplete.bash("interlock", top);
        StringBuilder out = new StringBuilder();
        for (String line : script.split("\n", -1)) {
            if (line.contains("_args=(\"" + MARK + "\")")) {
                continue; // the array of the mark itself
            }
            out.append(line.replace("compReplyArray \"${NAME_pos_param_args[@]}\"", "_interlock_lock_names")
                            .replace("compReplyArray \"${NAME_option_args[@]}\"", "_interlock_lock_names"))
                    .append('\n');
        }
        String result = out.toString().stripTrailing() + "\n" + LOCK_NAMES;
        if (result.contains(MARK) || !result.contains("$( _interlock_lock_names )") || !result.contains("\"flock:\"")) {
            throw new IllegalStateException("picocli's completion script changed shape: adapt CompletionScript");
        }
        return result;
    }

    /** Lock names for every NAME (argument or option value), the schemes for --backend, the shells of completion. */
    private static void addCandidates(CommandSpec spec) {
        List<ArgSpec> replaced = new ArrayList<>();
        for (ArgSpec arg : spec.args()) {
            if (candidates(arg) != null) {
                replaced.add(arg);
            }
        }
        for (ArgSpec arg : replaced) {
            List<String> candidates = candidates(arg);
            spec.remove(arg);
            if (arg.isOption()) {
                spec.addOption(((OptionSpec) arg)
                        .toBuilder().completionCandidates(candidates).build());
            } else {
                spec.addPositional(((PositionalParamSpec) arg)
                        .toBuilder().completionCandidates(candidates).build());
            }
        }
    }

    private static List<String> candidates(ArgSpec arg) {
        if (arg.paramLabel().equals("NAME")) {
            return List.of(MARK);
        }
        if (arg.isOption() && ((OptionSpec) arg).longestName().equals("--backend")) {
            return SCHEMES;
        }
        return arg.paramLabel().equals("SHELL") ? List.of("bash", "zsh") : null;
    }

    /** The script the build put in the jar. */
    static String read() {
        try (InputStream in = CompletionScript.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new CliException(
                        ExitCodes.SOFTWARE,
                        "this build has no completion script (" + RESOURCE + " missing from the jar)");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new CliException(ExitCodes.SOFTWARE, "cannot read the completion script: " + e.getMessage(), e);
        }
    }

    /** Writes the script into the class output directory {@code args[0]} and, if given, to the file {@code args[1]}. */
    public static void main(String[] args) throws IOException {
        String script = generate();
        Path resource = Path.of(args[0], CompletionScript.class.getPackageName().replace('.', '/'), RESOURCE);
        Files.createDirectories(resource.getParent());
        Files.writeString(resource, script, StandardCharsets.UTF_8);
        if (args.length > 1) {
            Path installed = Path.of(args[1]);
            Files.createDirectories(installed.getParent());
            Files.writeString(installed, script, StandardCharsets.UTF_8);
        }
    }
}
