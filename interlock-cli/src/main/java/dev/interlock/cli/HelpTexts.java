package dev.interlock.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * The help of {@code interlock}, {@code run} and {@code status} as picocli renders it without
 * colours, rendered once at build time ({@link #main}, run by the build after compiling) into
 * resources, so that {@code interlock --help} does not build every command's model by reflection
 * at every start. {@link FastPath} prints them only where picocli would print no colours;
 * FastPathTest checks they are what picocli prints.
 */
public final class HelpTexts {
    private HelpTexts() {}

    /** Which help each command line asks for. */
    static final Map<List<String>, String> FORMS = Map.of(
            List.of("--help"),
            "interlock",
            List.of("-h"),
            "interlock",
            List.of("help"),
            "interlock",
            List.of("run", "--help"),
            "run",
            List.of("run", "-h"),
            "run",
            List.of("help", "run"),
            "run",
            List.of("status", "--help"),
            "status",
            List.of("status", "-h"),
            "status",
            List.of("help", "status"),
            "status");

    private static String resource(String command) {
        return "help/" + command + ".txt";
    }

    /** The help {@code args} ask for, or null if they ask for something else or it was not rendered. */
    static String forArgs(String[] args) {
        String command = FORMS.get(List.of(args));
        if (command == null) {
            return null;
        }
        try (InputStream in = HelpTexts.class.getResourceAsStream(resource(command))) {
            return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return null;
        }
    }

    /** The help of {@code command} as picocli prints it without colours. */
    static String render(String command) {
        CommandLine cmd = Main.commandLine(Env.system(), null);
        if (!command.equals("interlock")) {
            cmd = cmd.getSubcommands().get(command);
        }
        StringWriter text = new StringWriter();
        PrintWriter out = new PrintWriter(text);
        cmd.usage(out, CommandLine.Help.Ansi.OFF);
        out.flush();
        return text.toString();
    }

    /** Writes the help texts under the class output directory {@code args[0]}. */
    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0], HelpTexts.class.getPackageName().replace('.', '/'), "help");
        Files.createDirectories(dir);
        for (String command : List.of("interlock", "run", "status")) {
            Files.writeString(dir.resolve(command + ".txt"), render(command), StandardCharsets.UTF_8);
        }
    }
}
