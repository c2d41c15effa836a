package dev.interlock.cli;

import dev.interlock.InvalidLockNameException;
import dev.interlock.LockBackendException;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.ProcLocksFile;
import dev.interlock.spi.support.Log;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** Entry point of the {@code interlock} command. The only place that calls {@link System#exit}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        // JNA fills its library search path, at its first use, by running 'ldconfig -p' in a child
        // process (a fork and an exec at every start) unless this is set; the tool loads only the
        // C library, which the dynamic loader finds by its soname (file.internal.Libc).
        setIfAbsent("jna.platform.library.path", "/usr/lib:/lib");
        shortLived();
        if (args.length > 0 && !args[0].startsWith("-") && !args[0].equals("help") && !args[0].equals("completion")) {
            // A command (not help, the version or the completion script, which call no C): load the native path
            // meanwhile,
            // and for the commands that read /proc/locks (flock:), keep its reads cheap.
            startDaemon(new PrepareNatives(), "interlock-natives");
            if ((args[0].equals("status") || args[0].equals("list")) && namesFlock(args)) {
                startDaemon(new WarmProcLocks(), "interlock-proc-locks");
            }
            openClassPathForJna();
        }
        List<byte[]> raw = RawArgs.read(args);
        String[] decoded = RawArgs.decodeUtf8(args, raw);
        Env env = Env.system();
        int code;
        try {
            code = FastPath.execute(env, raw, decoded);
            if (code == FastPath.NOT_HANDLED) {
                code = commandLine(env, raw, decoded).execute(decoded);
            }
        } catch (LinkageError e) {
            code = nativeFailure(e);
        }
        if (Boolean.getBoolean("interlock.cli.training")) {
            train(env, decoded);
        }
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * What a process that lives for one command should be spared (docs/benchmarks.md, "Command-line
     * start-up"; each is about a fifth of a {@code run}'s CPU time at start):
     * <ul>
     *   <li>JNA's function registration: registering any function makes JNA describe its types to
     *       libffi by reflection over thirteen structures. The tool calls each function a few times:
     *       it looks them up and calls them through JNA's {@code Function} instead
     *       ({@code interlock.natives=jna-call}), on every JDK (FFM's set-up costs more still).</li>
     *   <li>java.util.logging's configuration: the tool logs through slf4j-simple, but JNA makes a
     *       java.util.logging logger when it loads, and the JDK's LogManager would then read and
     *       apply its {@code logging.properties}. A configuration class that configures nothing
     *       replaces that (java.util.logging prints nothing); a configuration given on the command
     *       line ({@code -Djava.util.logging.config.file} or {@code .class}) is kept.</li>
     *   <li>the class path scans of ServiceLoader: slf4j is told its provider (slf4j-simple, which
     *       the tool bundles), and the core loads this project's backends by name.</li>
     * </ul>
     */
    private static void shortLived() {
        setIfAbsent("interlock.natives", "jna-call");
        // slf4j finds its provider with ServiceLoader (reading the class path's service files,
        // whose first use loads the JDK's jar-URL machinery) unless it is named; named, it says
        // so on stderr at its "info" level, which only its warnings should reach.
        setIfAbsent("slf4j.provider", "org.slf4j.simple.SimpleServiceProvider");
        setIfAbsent("slf4j.internal.verbosity", "WARN");
        if (System.getProperty("java.util.logging.config.file") == null) {
            setIfAbsent("java.util.logging.config.class", NoLoggingConfiguration.class.getName());
        }
    }

    /**
     * Loads the native path (JNA or FFM, and the java.util.logging logger JNA makes) on a thread of
     * its own, in parallel with the main thread's parsing and planning: about a tenth of a
     * {@code run}'s start on JDK 17, and nearly every command needs it. The main thread's first
     * native call waits for it (the JVM's class initialisation lock) if it is not done yet; a
     * failure met here is met again, with its reason, by that call ({@link #nativeFailure}).
     */
    private static final class PrepareNatives implements Runnable {
        @Override
        public void run() {
            LibcFiles.prepare();
        }
    }

    /**
     * The part of the natives thread's work the main thread can do first, while that thread is
     * busy with the JDK's method-handle set-up: JNA's start makes java.util.logging start, which
     * looks for a {@code System.LoggerFinder} service, and that lookup is what first opens the jar
     * on the class path (the start-up archive holds the classes) and the JDK's module image, ~5 ms
     * on JDK 17 on the path every command waits for. Done here, the same lookup on that thread
     * finds both open; the main thread, which would otherwise wait for JNA, parses afterwards.
     */
    private static void openClassPathForJna() {
        try {
            ClassLoader.getSystemClassLoader()
                    .getResources("META-INF/services/java.lang.System$LoggerFinder")
                    .hasMoreElements();
        } catch (IOException | RuntimeException e) {
            // only a head start: the natives thread does the same lookup and reports what fails
        }
    }

    /**
     * Reads /proc/locks every few milliseconds until the command has read it (at most a second):
     * the kernel makes the first read of a quiet period wait for an RCU grace period, 5–15 ms on
     * the development VM, and the read {@code status} makes of it on {@code flock:} is then a
     * cheap one (see {@link dev.interlock.file.internal.ProcLocksFile}).
     */
    private static final class WarmProcLocks implements Runnable {
        /** Taken on the main thread, before the command can have read /proc/locks itself. */
        private final int readsBefore = ProcLocksFile.reads();

        @Override
        public void run() {
            ProcLocksFile.keepWarm(readsBefore, 1_000_000_000L);
        }
    }

    /**
     * True if the command's lock space is a {@code flock:} one as far as a cheap look can tell
     * ({@code --backend}, else {@code $INTERLOCK_BACKEND}, else the default, which is): only then
     * is /proc/locks kept warm, since every read of it briefly stops the host's file locking.
     */
    static boolean namesFlock(String[] args) {
        String uri = null;
        for (int i = 1; i < args.length && uri == null; i++) {
            String a = args[i];
            if (a.equals("--")) {
                break;
            }
            if (a.equals("--backend") && i + 1 < args.length) {
                uri = args[i + 1];
            } else if (a.startsWith("--backend=")) {
                uri = a.substring("--backend=".length());
            }
        }
        if (uri == null) {
            uri = System.getenv(DefaultBackend.ENV);
        }
        return uri == null || uri.isEmpty() || uri.startsWith("flock:");
    }

    private static void startDaemon(Runnable task, String name) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        t.start();
    }

    /** A java.util.logging configuration class that configures nothing (see {@link #shortLived}). */
    public static final class NoLoggingConfiguration {
        public NoLoggingConfiguration() {}
    }

    /**
     * The launcher's training run ({@code bin/interlock} sets {@code interlock.cli.training}) puts
     * the classes one JVM loads into the start-up archive: after its {@code run}, a {@code status}
     * of the same lock and the tool's {@code --help} (output discarded), so that those start from
     * the archive too (the help's resource read and picocli's colour check: ~8 ms on JDK 25).
     */
    private static void train(Env env, String[] args) {
        RunCommand run = args.length > 0 && args[0].equals("run") ? FastPath.parseRun(args) : null;
        if (run == null || run.backend.uri == null) {
            return;
        }
        PrintWriter discard = new PrintWriter(Writer.nullWriter());
        // The thread status starts in main() (not started here): a class missing from the archive
        // is read from the jar, which then opens on the main thread before anything else.
        new WarmProcLocks();
        FastPath.execute(env, null, new String[] {"status", "--backend", run.backend.uri, run.name}, discard, discard);
        FastPath.execute(env, null, new String[] {"--help"}, discard, discard);
    }

    /**
     * The configured command line. Tests call this with their own {@link Env} and writers
     * ({@code setOut}/{@code setErr}), then {@code execute(args)}.
     */
    static CommandLine commandLine(Env env, List<byte[]> rawArgs) {
        return commandLine(env, rawArgs, null);
    }

    /**
     * Building picocli's model of a command costs reflection and class loading at every start, so
     * when {@code args} name a command, only that one is added (its help and errors are the
     * same); otherwise (no command, help, an unknown word) all of them are.
     */
    static CommandLine commandLine(Env env, List<byte[]> rawArgs, String[] args) {
        // picocli registers reflective converters for java.sql and java.time types in every
        // CommandLine it builds (Class.forName, DriverManager...); we use none of them.
        setIfAbsent("picocli.converters.excludes", "java\\..*");
        InterlockCommand top = new InterlockCommand(env, rawArgs);
        CommandLine cmd = new CommandLine(top);
        String wanted = args == null ? null : firstWord(args);
        if (wanted == null
                && args != null
                && args.length == 1
                && (args[0].equals("--version") || args[0].equals("-V"))) {
            return cmd; // the version needs no command models
        }
        boolean all = wanted == null || !SUBCOMMANDS.contains(wanted);
        if (all || wanted.equals("run")) {
            cmd.addSubcommand(new RunCommand());
        }
        if (all || wanted.equals("status")) {
            cmd.addSubcommand(new StatusCommand());
        }
        if (all || wanted.equals("list")) {
            cmd.addSubcommand(new ListCommand());
        }
        if (all || wanted.equals("break")) {
            cmd.addSubcommand(new BreakCommand());
        }
        if (all || wanted.equals("update")) {
            cmd.addSubcommand(new UpdateCommand());
        }
        if (all || wanted.equals("verify")) {
            cmd.addSubcommand(new VerifyCommand());
        }
        if (all || wanted.equals("completion")) {
            cmd.addSubcommand(new CompletionCommand());
        }
        if (all) {
            cmd.addSubcommand(new CommandLine.HelpCommand());
        }
        boolean[] verbose = new boolean[1];
        cmd.setExpandAtFiles(false); // "@file" after "--" belongs to the command (curl -d @body.json)
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        cmd.setParameterExceptionHandler(Main::usageError);
        cmd.setExecutionStrategy(parseResult -> {
            verbose[0] = isVerbose(parseResult);
            configureLogging(verbose[0]);
            return new CommandLine.RunLast().execute(parseResult);
        });
        cmd.setExecutionExceptionHandler((ex, commandLine, parseResult) -> handle(ex, commandLine, verbose[0]));
        return cmd;
    }

    private static final List<String> SUBCOMMANDS =
            List.of("run", "status", "list", "break", "update", "verify", "completion");

    /** The first argument that is not an option of the top command (which takes no values). */
    private static String firstWord(String[] args) {
        for (String a : args) {
            if (!a.startsWith("-")) {
                return a;
            }
            if (a.equals("--")) {
                return null;
            }
        }
        return null;
    }

    private static boolean isVerbose(ParseResult pr) {
        for (ParseResult p = pr; p != null; p = p.subcommand()) {
            if (p.hasMatchedOption("--verbose")) {
                return true;
            }
        }
        return false;
    }

    /** slf4j-simple reads these once, when the first logger is made: set them before that. */
    static void configureLogging(boolean verbose) {
        setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", verbose ? "debug" : "warn");
        setIfAbsent("org.slf4j.simpleLogger.logFile", "System.err");
        setIfAbsent("org.slf4j.simpleLogger.showThreadName", verbose ? "true" : "false");
        setIfAbsent("org.slf4j.simpleLogger.showDateTime", verbose ? "true" : "false");
        if (verbose) {
            // Only then: with a format set, slf4j-simple builds a SimpleDateFormat (calendar, time
            // zone and locale data: ~30 ms) even when it shows no dates.
            setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        }
        setIfAbsent("org.slf4j.simpleLogger.showShortLogName", "true");
        setIfAbsent("org.slf4j.simpleLogger.levelInBrackets", "true");
        if (!verbose) {
            // The ZooKeeper client warns, with a stack trace, at every failed connection attempt; the
            // backend's own message says what failed and what to check.
            setIfAbsent("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
        }
        if (onlyWarningsShown()) {
            // Then a command that logs nothing worth showing never starts slf4j (~10 ms on JDK 17).
            Log.belowWarningsOff();
        }
    }

    /**
     * Whether slf4j-simple, as configured, shows no debug or info message of any logger: its
     * default level is warn, error or off, and no logger has a level of its own that shows them
     * ({@code -Dorg.slf4j.simpleLogger.log.NAME=debug}).
     */
    static boolean onlyWarningsShown() {
        if (!quiet(System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "info"))) {
            return false;
        }
        for (String key : System.getProperties().stringPropertyNames()) {
            if (key.startsWith("org.slf4j.simpleLogger.log.") && !quiet(System.getProperty(key))) {
                return false;
            }
        }
        return true;
    }

    /** A level that shows no debug or info message: warn, error or off. */
    private static boolean quiet(String level) {
        String l = level == null ? "" : level.trim().toLowerCase(Locale.ROOT);
        return l.equals("warn") || l.equals("error") || l.equals("off");
    }

    /**
     * What a command says when it cannot call C (JNA's native part cannot be loaded, say, where
     * the temporary directory is mounted noexec): the first failure's message, which says what to
     * do, rather than the "Could not initialize class" of every later use. Exit 69.
     */
    static int nativeFailure(LinkageError e) {
        String message = null;
        for (Throwable t = e; t != null && message == null; t = t.getCause()) {
            if (t instanceof UnsatisfiedLinkError && t.getMessage() != null) {
                message = t.getMessage();
            }
        }
        System.out.flush();
        System.err.println(
                "interlock: " + (message != null ? message : "cannot call the C library: " + e.getMessage()));
        return ExitCodes.UNAVAILABLE;
    }

    static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    private static int usageError(CommandLine.ParameterException ex, String[] args) {
        CommandLine c = ex.getCommandLine();
        PrintWriter err = c.getErr();
        String message = ex.getMessage();
        boolean suggest = true;
        if (ex instanceof CommandLine.UnmatchedArgumentException) {
            List<String> unmatched = ((CommandLine.UnmatchedArgumentException) ex).getUnmatched();
            if (!unmatched.isEmpty() && !unmatched.get(0).startsWith("-") && c.getParent() == null) {
                message = "unknown command '" + unmatched.get(0)
                        + "': use run, update, status, list, break, verify, completion or help";
            } else if (!unmatched.isEmpty()) {
                String misplaced =
                        OptionOwners.misplaced(c.getParent() == null ? null : c.getCommandName(), unmatched.get(0));
                if (misplaced != null) {
                    message = misplaced;
                    suggest = false;
                }
            }
        }
        err.println("interlock: " + message);
        if (suggest) {
            CommandLine.UnmatchedArgumentException.printSuggestions(ex, err);
        }
        err.println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for more information.");
        err.flush();
        return ExitCodes.USAGE;
    }

    private static int handle(Exception ex, CommandLine commandLine, boolean verbose) {
        return report(ex, commandLine.getErr(), commandLine.getCommandSpec().qualifiedName(), verbose);
    }

    /**
     * Prints the failure of a command ({@code qualifiedName}, e.g. {@code interlock run}) as one
     * line saying what to fix, and returns its exit code; the stack trace only if verbose.
     */
    static int report(Exception ex, PrintWriter err, String qualifiedName, boolean verbose) {
        int code;
        String message;
        if (ex instanceof CliException) {
            code = ((CliException) ex).exitCode();
            message = ex.getMessage();
        } else if (ex instanceof InvalidLockNameException) {
            code = ExitCodes.USAGE;
            message = "bad lock name: " + ex.getMessage();
        } else if (ex instanceof LockBackendException) {
            code = ExitCodes.UNAVAILABLE;
            message = ex.getMessage();
        } else {
            code = ExitCodes.SOFTWARE;
            message = "internal error: " + ex
                    + (verbose ? "" : " (run with -v for the stack trace, and please report it)");
            verbose = verbose || Boolean.getBoolean("interlock.cli.trace");
        }
        err.println("interlock: " + message);
        if (code == ExitCodes.USAGE) {
            err.println("Try '" + qualifiedName + " --help' for more information.");
        }
        if (verbose) {
            ex.printStackTrace(err);
        }
        err.flush();
        return code;
    }
}
