package dev.interlock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * interlock(1), written in roff by the build ({@link #main}) from the same command model as the
 * help, so the two cannot disagree: one section per command with its synopsis, description,
 * arguments, options, exit codes and examples.
 *
 * <p>Not picocli-codegen's ManPageGenerator: that writes AsciiDoc, which needs Asciidoctor (Ruby,
 * or JRuby from Maven, tens of megabytes and seconds of every build) to become a man page; the
 * model is small enough to write roff from directly.
 */
public final class ManPage {
    private ManPage() {}

    /** The man page of the tool at {@code version}. */
    static String render(String version) {
        CommandLine top = Main.commandLine(Env.system(), null);
        CommandSpec spec = top.getCommandSpec();
        StringBuilder roff = new StringBuilder();
        roff.append(".TH INTERLOCK 1 \"\" \"interlock ").append(escape(version)).append("\" \"User Commands\"\n");
        roff.append(".SH NAME\ninterlock \\- ")
                .append(escape(String.join(" ", spec.usageMessage().header())))
                .append('\n');
        roff.append(".SH SYNOPSIS\n.nf\n");
        for (CommandLine sub : commands(top)) {
            roff.append(escape(synopsis(sub.getCommandSpec()))).append('\n');
        }
        roff.append("interlock help [COMMAND]\ninterlock \\-\\-version\n.fi\n");
        roff.append(".SH DESCRIPTION\n");
        paragraphs(roff, spec.usageMessage().description());
        roff.append(".SH COMMANDS\n");
        for (CommandLine sub : commands(top)) {
            command(roff, sub.getCommandSpec());
        }
        roff.append(".SH EXIT STATUS\n");
        exitCodes(roff, spec.usageMessage().exitCodeList());
        roff.append(".SH ENVIRONMENT\n");
        definition(roff, "INTERLOCK_BACKEND", "The lock space when a command has no \\-\\-backend.");
        definition(
                roff,
                "INTERLOCK_JAVA",
                "The java binary or JDK directory the launcher runs (default: the newest JDK 17 or later it finds).");
        definition(roff, "INTERLOCK_JAVA_OPTS", "More options for the JVM.");
        roff.append(".SH EXAMPLES\n");
        preformatted(roff, spec.usageMessage().footer());
        roff.append(
                ".SH SEE ALSO\n.BR flock (1).\nThe reference with real output: docs/cli.md in the documentation (doc/cli.md in the release tarball).\n");
        return roff.toString();
    }

    /** The commands in the order of the tool's help, without {@code help} itself. */
    private static Iterable<CommandLine> commands(CommandLine top) {
        List<CommandLine> list = new ArrayList<>();
        for (Map.Entry<String, CommandLine> e : top.getSubcommands().entrySet()) {
            if (!e.getKey().equals("help")) {
                list.add(e.getValue());
            }
        }
        return list;
    }

    private static void command(StringBuilder roff, CommandSpec spec) {
        roff.append(".SS \"interlock ").append(escape(spec.name())).append("\"\n");
        roff.append(escape(String.join(" ", spec.usageMessage().header()))).append("\n.PP\n.nf\n");
        roff.append(escape(synopsis(spec))).append("\n.fi\n");
        paragraphs(roff, spec.usageMessage().description());
        if (!spec.positionalParameters().isEmpty()) {
            roff.append(".PP\nArguments:\n.RS\n");
            for (PositionalParamSpec p : spec.positionalParameters()) {
                definition(roff, escape(p.paramLabel()), escape(String.join(" ", p.description())));
            }
            roff.append(".RE\n");
        }
        roff.append(".PP\nOptions:\n.RS\n");
        for (OptionSpec o : spec.options()) {
            StringBuilder tag = new StringBuilder();
            for (String name : o.names()) {
                tag.append(tag.length() == 0 ? "" : ", ")
                        .append("\\fB")
                        .append(escape(name))
                        .append("\\fR");
            }
            if (o.arity().max() > 0) {
                tag.append(" \\fI").append(escape(o.paramLabel())).append("\\fR");
            }
            definition(roff, tag.toString(), escape(String.join(" ", o.description())));
        }
        roff.append(".RE\n");
        if (!spec.usageMessage().exitCodeList().isEmpty()) {
            roff.append(".PP\nExit codes:\n.RS\n");
            exitCodes(roff, spec.usageMessage().exitCodeList());
            roff.append(".RE\n");
        }
        if (spec.usageMessage().footer().length > 0) {
            roff.append(".PP\nExamples:\n");
            preformatted(roff, spec.usageMessage().footer());
        }
    }

    /** The synopsis as the help prints it, without "Usage: ". */
    private static String synopsis(CommandSpec spec) {
        CommandLine.Help help =
                new CommandLine.Help(spec, CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        return help.synopsis(0).stripTrailing();
    }

    private static void exitCodes(StringBuilder roff, Map<String, String> codes) {
        for (Map.Entry<String, String> e : codes.entrySet()) {
            definition(roff, escape(e.getKey().trim()), escape(e.getValue().trim()));
        }
    }

    private static void definition(StringBuilder roff, String tag, String text) {
        roff.append(".TP\n").append(tag).append('\n').append(text).append('\n');
    }

    /** Help lines as filled text: an empty line starts a new paragraph. */
    private static void paragraphs(StringBuilder roff, String[] lines) {
        for (String line : lines) {
            roff.append(line.isBlank() ? ".PP" : escape(line.strip())).append('\n');
        }
    }

    private static void preformatted(StringBuilder roff, String[] lines) {
        roff.append(".PP\n.RS\n.nf\n");
        for (String line : lines) {
            roff.append(escape(line)).append('\n');
        }
        roff.append(".fi\n.RE\n");
    }

    /** Text as roff prints it literally: backslashes, ASCII hyphens (options copy as typed), no control lines. */
    static String escape(String text) {
        StringBuilder out = new StringBuilder();
        for (String line : text.split("\n", -1)) {
            if (out.length() > 0) {
                out.append('\n');
            }
            String l = line.replace("\\", "\\e").replace("-", "\\-");
            if (l.startsWith(".") || l.startsWith("'")) {
                l = "\\&" + l;
            }
            out.append(l);
        }
        return out.toString();
    }

    /** Writes {@code args[0]} (the man page's path) for version {@code args[1]}. */
    public static void main(String[] args) throws IOException {
        Path page = Path.of(args[0]);
        Files.createDirectories(page.getParent());
        Files.writeString(page, render(args[1]), StandardCharsets.UTF_8);
    }
}
