package dev.interlock.cli;

import dev.interlock.LockRequest;
import dev.interlock.spi.support.Durations;
import java.io.BufferedWriter;
import java.io.Console;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * The command lines scripts run in loops ({@code run}, {@code status}, {@code --version}) and
 * shells at every start ({@code completion bash|zsh}), parsed without picocli, and the help of the
 * tool and of {@code run} and {@code status} ({@link HelpTexts}).
 *
 * <p>picocli builds its model of a command by reflection over the annotations at every start,
 * which cost about as much as the rest of {@code run} together (docs/benchmarks.md). This parser
 * only accepts the plain, valid forms of those commands: separate options ({@code -n}, {@code -w
 * 5m}, {@code --wait=5m}), each at most once, one NAME and {@code -- COMMAND} for {@code run}.
 * Anything else (help, clustered options such as {@code -nq}, a value glued to a short option, a
 * repeated option, a bad value, a missing {@code --}) is left to picocli, so help and every error
 * message stay picocli's, word for word; the command's fields are the same either way.
 */
final class FastPath {
    /** Returned when picocli must parse the line. Not an exit status (those are 0..255). */
    static final int NOT_HANDLED = -1;

    private FastPath() {}

    /** Runs {@code args} with the process's standard streams, or returns {@link #NOT_HANDLED}. */
    static int execute(Env env, List<byte[]> rawArgs, String[] args) {
        if (args.length == 0) {
            return NOT_HANDLED;
        }
        switch (args[0]) {
            case "run":
            case "status":
            case "completion":
            case "--version":
            case "-V":
            case "--help":
            case "-h":
            case "help":
                break;
            default:
                return NOT_HANDLED;
        }
        return execute(
                env,
                rawArgs,
                args,
                writer(System.out, "sun.stdout.encoding"),
                writer(System.err, "sun.stderr.encoding"));
    }

    /** As {@link #execute(Env, List, String[])}, writing to {@code out} and {@code err} (tests). */
    static int execute(Env env, List<byte[]> rawArgs, String[] args, PrintWriter out, PrintWriter err) {
        if (args.length == 0) {
            return NOT_HANDLED;
        }
        String help = HelpTexts.forArgs(args);
        if (help != null) {
            if (colours()) {
                return NOT_HANDLED;
            }
            out.print(help);
            out.flush();
            return ExitCodes.OK;
        }
        switch (args[0]) {
            case "run": {
                RunCommand run = parseRun(args);
                if (run == null) {
                    return NOT_HANDLED;
                }
                run.top = new InterlockCommand(env, rawArgs);
                // Anonymous classes, not lambdas: linking a lambda costs JDK 17 about a millisecond at start.
                return guarded("interlock run", run.verbosity.verbose, err, new Body() {
                    @Override
                    public int run() {
                        return run.execute(out, err);
                    }
                });
            }
            case "status": {
                StatusCommand status = parseStatus(args);
                if (status == null) {
                    return NOT_HANDLED;
                }
                status.top = new InterlockCommand(env, rawArgs);
                return guarded("interlock status", status.verbosity.verbose, err, new Body() {
                    @Override
                    public int run() {
                        return status.execute(out);
                    }
                });
            }
            case "completion":
                // Run by a shell's start-up file at every new shell: the script, without picocli.
                if (args.length != 2 || !(args[1].equals("bash") || args[1].equals("zsh"))) {
                    return NOT_HANDLED;
                }
                return guarded("interlock completion", false, err, new Body() {
                    @Override
                    public int run() {
                        out.print(CompletionScript.read());
                        out.flush();
                        return ExitCodes.OK;
                    }
                });
            case "--version":
            case "-V":
                if (args.length != 1) {
                    return NOT_HANDLED;
                }
                for (String line : new InterlockCommand.Version().getVersion()) {
                    out.println(line);
                }
                out.flush();
                return ExitCodes.OK;
            default:
                return NOT_HANDLED;
        }
    }

    private interface Body {
        int run();
    }

    /** What picocli's execution strategy and exception handler in {@link Main} do around a command. */
    private static int guarded(String qualifiedName, boolean verbose, PrintWriter err, Body body) {
        Main.configureLogging(verbose);
        try {
            return body.run();
        } catch (Exception e) {
            return Main.report(e, err, qualifiedName, verbose);
        } finally {
            err.flush();
        }
    }

    /**
     * {@code run [options] NAME -- COMMAND [ARG...]} with its fields set as picocli would set
     * them, or null if picocli must parse the line.
     */
    static RunCommand parseRun(String[] args) {
        RunCommand c = new RunCommand();
        c.backend = new BackendOption();
        c.verbosity = new Verbosity();
        c.waiting = new WaitOptions();
        boolean conflictSet = false;
        String name = null;
        int i = 1;
        for (; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--")) {
                break;
            }
            if (!a.startsWith("-")) {
                if (name != null) {
                    return null;
                }
                name = a;
                continue;
            }
            int eq = a.startsWith("--") ? a.indexOf('=') : -1; // --option=value
            String option = eq > 0 ? a.substring(0, eq) : a;
            String value = eq > 0 ? a.substring(eq + 1) : null;
            switch (option) {
                case "-s":
                case "--shared":
                    if (value != null || c.shared) {
                        return null;
                    }
                    c.shared = true;
                    break;
                case "-n":
                case "--no-wait":
                    if (value != null || c.waiting.noWait) {
                        return null;
                    }
                    c.waiting.noWait = true;
                    break;
                case "-q":
                case "--quiet":
                    if (value != null || c.waiting.quiet) {
                        return null;
                    }
                    c.waiting.quiet = true;
                    break;
                case "-v":
                case "--verbose":
                    if (value != null || c.verbosity.verbose) {
                        return null;
                    }
                    c.verbosity.verbose = true;
                    break;
                case "-w":
                case "--wait":
                case "--lease":
                case "--hold-at-least": {
                    if (value == null) {
                        if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                            return null;
                        }
                        value = args[++i];
                    }
                    Duration d = duration(value);
                    if (d == null) {
                        return null;
                    }
                    if (option.equals("--lease")) {
                        if (c.lease != null) {
                            return null;
                        }
                        c.lease = d;
                    } else if (option.equals("--hold-at-least")) {
                        if (c.holdAtLeast != null) {
                            return null;
                        }
                        c.holdAtLeast = d;
                    } else {
                        if (c.waiting.wait != null) {
                            return null;
                        }
                        c.waiting.wait = d;
                    }
                    break;
                }
                case "-E":
                case "--conflict-exit-code": {
                    if (value == null) {
                        if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                            return null;
                        }
                        value = args[++i];
                    }
                    int n = exitStatus(value);
                    if (n < 0 || conflictSet) {
                        return null;
                    }
                    c.waiting.conflictExitCode = n;
                    conflictSet = true;
                    break;
                }
                case "--limit": {
                    if (value == null) {
                        if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                            return null;
                        }
                        value = args[++i];
                    }
                    int n = limit(value);
                    if (n < 0 || c.limit != null) {
                        return null;
                    }
                    c.limit = n;
                    break;
                }
                case "--backend":
                    if (value == null) {
                        if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                            return null;
                        }
                        value = args[++i];
                    }
                    if (c.backend.uri != null) {
                        return null;
                    }
                    c.backend.uri = value;
                    break;
                default:
                    return null;
            }
        }
        // One NAME before '--', a COMMAND after it; -n and -w together, or --limit with -s, is picocli's error to tell.
        if (name == null
                || i + 1 >= args.length
                || (c.waiting.noWait && c.waiting.wait != null)
                || (c.limit != null && c.shared)) {
            return null;
        }
        c.name = name;
        c.command = new ArrayList<>(Arrays.asList(args).subList(i + 1, args.length));
        return c;
    }

    /** {@code status [--backend URI] [--json] [-v] NAME...}, or null if picocli must parse the line. */
    static StatusCommand parseStatus(String[] args) {
        StatusCommand c = new StatusCommand();
        c.backend = new BackendOption();
        c.verbosity = new Verbosity();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-")) {
                c.names.add(a);
                continue;
            }
            int eq = a.startsWith("--") ? a.indexOf('=') : -1; // --option=value
            String option = eq > 0 ? a.substring(0, eq) : a;
            String value = eq > 0 ? a.substring(eq + 1) : null;
            switch (option) {
                case "--json":
                    if (value != null || c.json) {
                        return null;
                    }
                    c.json = true;
                    break;
                case "-v":
                case "--verbose":
                    if (value != null || c.verbosity.verbose) {
                        return null;
                    }
                    c.verbosity.verbose = true;
                    break;
                case "--backend":
                    if (value == null) {
                        if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                            return null;
                        }
                        value = args[++i];
                    }
                    if (c.backend.uri != null) {
                        return null;
                    }
                    c.backend.uri = value;
                    break;
                default:
                    return null; // includes "--": picocli's handling of what follows it
            }
        }
        return c.names.isEmpty() ? null : c;
    }

    /**
     * True if picocli would print help in colour (to a terminal, unless NO_COLOR and the like
     * say otherwise): the rendered texts have none, so picocli prints that help itself.
     */
    static boolean colours() {
        return colours(System.getProperty("picocli.ansi"), System.getenv(), new Terminal());
    }

    /**
     * picocli's rule ({@code CommandLine.Help.Ansi.AUTO.enabled()} on a system that is not
     * Windows), given the {@code picocli.ansi} property, the environment and whether standard input
     * and output are a terminal (asked last, only if the rest does not decide). Not asked of
     * picocli itself: its classes are Java 5 bytecode, which no start-up archive can hold, and its
     * check loads some thirty of them (~8 ms of a {@code --help} on JDK 25). FastPathTest holds
     * this to picocli's answer under each variable it reads.
     */
    static boolean colours(String ansi, Map<String, String> env, BooleanSupplier terminal) {
        if (ansi == null || ansi.equalsIgnoreCase("AUTO")) {
            if (env.get("NO_COLOR") != null) {
                return false;
            }
            String force = env.get("CLICOLOR_FORCE");
            if (force != null && !force.equals("0")) {
                return true;
            }
            if ("0".equals(env.get("CLICOLOR")) || "OFF".equals(env.get("ConEmuANSI"))) {
                return false;
            }
            return terminal.getAsBoolean();
        }
        return ansi.equalsIgnoreCase("TTY") ? terminal.getAsBoolean() : Boolean.parseBoolean(ansi);
    }

    /** Whether standard input and output are a terminal, as picocli tells (System.console()). */
    static final class Terminal implements BooleanSupplier {
        @Override
        public boolean getAsBoolean() {
            Console console = System.console();
            if (console == null) {
                return false;
            }
            try { // JDK 22+: a console even where the streams are redirected; isTerminal says which
                return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return true; // before JDK 22, a console is a terminal
            }
        }
    }

    private static Duration duration(String value) {
        try {
            return Durations.parse(value);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** 0..255 as {@link RunCommand.ExitCodeConverter} accepts it, else -1. */
    private static int exitStatus(String value) {
        try {
            int n = Integer.parseInt(value.trim());
            return n >= 0 && n <= 255 ? n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A semaphore limit as {@link RunCommand.LimitConverter} accepts it, else -1. */
    private static int limit(String value) {
        try {
            long n = Long.parseLong(value.trim());
            return n >= 1 && n <= LockRequest.MAX_LIMIT ? (int) n : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** A writer like the ones picocli makes: the JVM's encoding of that stream, auto-flushed. */
    private static PrintWriter writer(OutputStream stream, String encodingProperty) {
        Charset charset = Charset.defaultCharset();
        String encoding = System.getProperty(encodingProperty);
        if (encoding != null) {
            try {
                charset = Charset.forName(encoding);
            } catch (RuntimeException e) {
                // the default, as picocli does
            }
        }
        return new PrintWriter(new BufferedWriter(new OutputStreamWriter(stream, charset)), true);
    }
}
