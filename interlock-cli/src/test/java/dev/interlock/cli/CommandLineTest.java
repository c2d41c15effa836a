package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** The command line in-process: parsing, messages and exit codes; no child processes. */
class CommandLineTest {
    @TempDir
    Path tmp;

    Path home;
    final Map<String, String> vars = new HashMap<>();
    final StringWriter out = new StringWriter();
    final StringWriter err = new StringWriter();

    @BeforeEach
    void setUp() throws IOException {
        home = Files.createDirectory(tmp.resolve("home"));
    }

    int run(String... args) {
        return run(Env.currentUid(), args);
    }

    int run(long uid, String... args) {
        CommandLine cmd = Main.commandLine(new Env(vars, home, uid, tmp), null);
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        return cmd.execute(args);
    }

    String backend() throws IOException {
        return "flock:" + Files.createDirectories(tmp.resolve("locks"));
    }

    @Test
    void run_badDuration_is64_andNamesTheForms() {
        assertThat(run("run", "-w", "5 minutes", "x", "--", "true")).isEqualTo(64);
        assertThat(err.toString())
                .contains("'--wait'")
                .contains("500ms, 30s, 5m, 1h")
                .contains("interlock run --help");
    }

    @Test
    void run_withoutDoubleDash_is64() {
        assertThat(run("run", "x", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("missing '--' before the command");
    }

    @Test
    void run_withoutCommand_is64() {
        assertThat(run("run", "x", "--")).isEqualTo(64);
        assertThat(err.toString()).contains("missing COMMAND after '--'");
    }

    @Test
    void run_withoutName_is64() {
        assertThat(run("run", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("NAME must come before '--'");
    }

    @Test
    void run_extraArgumentBeforeDoubleDash_is64() {
        assertThat(run("run", "x", "echo", "--", "hi")).isEqualTo(64);
        assertThat(err.toString()).contains("unexpected argument 'echo' before '--'");
    }

    @Test
    void run_emptyName_is64() throws IOException {
        assertThat(run("run", "--backend", backend(), "", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("bad lock name").contains("must not be empty");
    }

    @Test
    void run_controlCharacterInName_is64() throws IOException {
        assertThat(run("run", "--backend", backend(), "a\tb", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("control characters");
    }

    @Test
    void run_noWaitAndWait_is64() {
        assertThat(run("run", "-n", "-w", "1s", "x", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("exclude each other");
    }

    @Test
    void run_conflictExitCodeOutOfRange_is64() {
        assertThat(run("run", "-E", "256", "x", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("256 is not an exit status; use 0-255");
        assertThat(run("run", "-E", "-1", "x", "--", "true")).isEqualTo(64);
    }

    @Test
    void run_unknownOption_is64_withSuggestion() {
        assertThat(run("run", "--no-wiat", "x", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("Unknown option: '--no-wiat'").contains("--no-wait");
    }

    @Test
    void run_leaseTooShort_is64() throws IOException {
        assertThat(run("run", "--backend", backend(), "--lease", "10ms", "x", "--", "true"))
                .isEqualTo(64);
        assertThat(err.toString()).contains("bad --lease").contains("at least 100ms");
    }

    @Test
    void backend_withoutScheme_is64() {
        assertThat(run("status", "--backend", "/var/lock/x", "x")).isEqualTo(64);
        assertThat(err.toString()).contains("has no scheme");
    }

    @Test
    void backend_unknownScheme_is64() {
        assertThat(run("status", "--backend", "nosuch:/x", "x")).isEqualTo(64);
        assertThat(err.toString()).contains("no backend for scheme 'nosuch:'").contains("flock");
    }

    /** Issue 25: a misspelt option is refused by every backend, never ignored (a jdbc: driver ignores what it does not know). */
    @Test
    void backend_unknownOption_is64_namingTheOptions_onEveryBackend() throws IOException {
        String dir = Files.createDirectories(tmp.resolve("locks")).toString();
        String[][] cases = {
            {"jdbc:postgresql://127.0.0.1:1/db?tabel=net_locks", "did you mean 'table'?"},
            {"jdbc:mariadb://127.0.0.1:1/db?tabel=net_locks", "did you mean 'table'?"},
            {"redis://127.0.0.1:1/0?prefx=a", "did you mean 'prefix'?"},
            {"dir:" + dir + "?pol=1s", "did you mean 'poll'?"},
            {"flock:" + dir + "?netwrk=allow", "did you mean 'network'?"},
            {"mem:x?poll=1s", "without options"},
        };
        for (String[] c : cases) {
            err.getBuffer().setLength(0);
            assertThat(run("status", "--backend", c[0], "x")).as(c[0]).isEqualTo(64);
            assertThat(err.toString()).as(c[0]).contains("bad --backend").contains(c[1]);
        }
        assertThat(run("status", "--backend", "jdbc:postgresql://127.0.0.1:1/db?tabel=net_locks", "x"))
                .isEqualTo(64);
        assertThat(err.toString())
                .contains("unknown option 'tabel'")
                .contains("table=...")
                .contains("create=...")
                .contains("the JDBC driver");
    }

    /** Issue 25: a waiting run rides out a transient fault (its first tries got no answer) and runs the command. */
    @Test
    void run_waiting_ridesOutATransientFault_butASingleTryReportsIt69() {
        assertThat(run("run", "--backend", "broken:flaky", "-w", "30s", "x", "--", "true"))
                .as(err.toString())
                .isZero();
        assertThat(run("run", "--backend", "broken:flaky", "x", "--", "true"))
                .as("waiting without end")
                .isZero();
        assertThat(run("run", "--backend", "broken:flaky", "-n", "x", "--", "true"))
                .isEqualTo(69);
        assertThat(err.toString()).contains("no answer within the timeout");
    }

    @Test
    void backend_missingDirThatCannotBeCreated_is69() {
        Path missing = tmp.resolve("no/such/parent/locks");
        assertThat(run("status", "--backend", "flock:" + missing, "x")).isEqualTo(69);
        assertThat(err.toString()).contains(missing.toString()).contains("does not exist");
    }

    @Test
    void backend_notADirectory_is69() throws IOException {
        Path file = Files.writeString(tmp.resolve("file"), "x");
        assertThat(run("run", "--backend", "flock:" + file, "x", "--", "true")).isEqualTo(69);
        assertThat(err.toString()).contains("is not a directory");
    }

    @Test
    void defaultBackend_isCreatedPrivate_inHome_forTheCommandsThatLock() throws IOException {
        Path dir = home.resolve(".local/state/interlock/locks");
        assertThat(DefaultBackend.resolve(null, new Env(vars, home, Env.currentUid(), tmp), true))
                .isEqualTo("flock:" + dir);
        assertThat(dir).isDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                .isEqualTo("rwx------");
        assertThat(run("status", "x")).isEqualTo(0);
        assertThat(out.toString()).contains("x").contains("free");
    }

    @Test
    void defaultBackend_statusListBreak_inAFreshHome_createNothing_and69() {
        Path dir = home.resolve(".local/state/interlock/locks");
        for (String[] args : new String[][] {{"status", "x"}, {"list"}, {"break", "x"}, {"status", "--json", "x"}}) {
            err.getBuffer().setLength(0);
            assertThat(run(args)).as(String.join(" ", args)).isEqualTo(69);
            assertThat(err.toString())
                    .as(String.join(" ", args))
                    .isEqualTo("interlock: no lock space at " + dir + " (nothing has been locked there yet)"
                            + System.lineSeparator());
        }
        assertThat(home.resolve(".local")).doesNotExist();
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void statusListBreak_onAMistypedPath_createNothing_and69() {
        Path typo = tmp.resolve("lokcs");
        for (String[] args : new String[][] {
            {"status", "--backend", "flock:" + typo, "x"},
            {"list", "--backend", "flock:" + typo},
            {"break", "--backend", "flock:" + typo, "x"}
        }) {
            err.getBuffer().setLength(0);
            assertThat(run(args)).as(String.join(" ", args)).isEqualTo(69);
            assertThat(err.toString())
                    .as(String.join(" ", args))
                    .contains("no lock space at " + typo + " (nothing was created)");
        }
        assertThat(typo).doesNotExist();
        assertThat(out.toString()).isEmpty();
    }

    @Test
    void defaultBackend_writableByOthers_is69_andSaysHowToFix() throws IOException {
        Path dir = Files.createDirectories(home.resolve(".local/state/interlock/locks"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertThat(run("run", "x", "--", "true")).isEqualTo(69);
        assertThat(err.toString())
                .contains("writable by others")
                .contains("chmod 700 " + dir)
                .contains("--backend");
    }

    @Test
    void defaultBackend_writableByGroup_is69() throws IOException {
        Path dir = Files.createDirectories(home.resolve(".local/state/interlock/locks"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwx---"));
        assertThat(run("status", "x")).isEqualTo(69);
        assertThat(err.toString()).contains("writable by its group");
    }

    @Test
    void defaultBackend_ownedBySomeoneElse_is69() throws IOException {
        Path dir = Files.createDirectories(home.resolve(".local/state/interlock/locks"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        // Pretend to be another user: the directory's owner is not "us".
        long me = Env.currentUid();
        assertThat(run(me + 4242, "status", "x")).isEqualTo(69);
        assertThat(err.toString()).contains("belongs to uid " + me).contains("not to you");
    }

    @Test
    void defaultBackend_homeNotUsable_fallsBackToTmp() {
        home = null;
        Path dir = tmp.resolve("interlock-" + Env.currentUid());
        assertThat(run("status", "x")).isEqualTo(69);
        assertThat(err.toString()).contains("no lock space at " + dir);
        assertThat(dir).doesNotExist();
        assertThat(DefaultBackend.resolve(null, new Env(vars, null, Env.currentUid(), tmp), true))
                .isEqualTo("flock:" + dir);
        assertThat(dir).isDirectory();
    }

    @Test
    void defaultBackend_symlinkInTmp_is69() throws IOException {
        home = null;
        Files.createSymbolicLink(
                tmp.resolve("interlock-" + Env.currentUid()), Files.createDirectory(tmp.resolve("elsewhere")));
        assertThat(run("status", "x")).isEqualTo(69);
        assertThat(err.toString()).contains("symbolic link");
    }

    @Test
    void defaultBackend_cannotBeCreated_is69() throws IOException {
        Files.writeString(home.resolve(".local"), "a file where a directory should be");
        assertThat(run("run", "x", "--", "true")).isEqualTo(69);
        assertThat(err.toString())
                .contains("cannot create the default lock directory")
                .contains(home.resolve(".local/state") + ": Not a directory");
    }

    @Test
    void environmentVariable_choosesTheBackend() throws IOException {
        vars.put("INTERLOCK_BACKEND", backend());
        assertThat(run("status", "--json", "x")).isEqualTo(0);
        assertThat(out.toString().trim())
                .isEqualTo(
                        "{\"backend\":\"" + backend()
                                + "\",\"locks\":[{\"name\":\"x\",\"free\":true,\"limit\":null,\"waiters\":0,\"holders\":[],\"queued\":[]}]}");
        assertThat(home.resolve(".local")).doesNotExist();
    }

    @Test
    void environmentVariable_badUri_is64_andNamesTheVariable() {
        vars.put("INTERLOCK_BACKEND", "nosuch:/x");
        assertThat(run("status", "x")).isEqualTo(64);
        assertThat(err.toString()).contains("bad $INTERLOCK_BACKEND: no backend for scheme 'nosuch:'");
    }

    @Test
    void break_onFlock_saysKernelLocksFreeWhenTheirHolderExits() throws IOException {
        assertThat(run("break", "--backend", backend(), "x")).isEqualTo(69);
        assertThat(err.toString()).contains("kernel lock").contains("frees when its holder exits");
    }

    @Test
    void break_badOwnerId_is64() throws IOException {
        assertThat(run("break", "--backend", backend(), "x", "--owner", "nonsense"))
                .isEqualTo(64);
        assertThat(err.toString()).contains("host:pid:start:nonce");
    }

    @Test
    void unknownCommand_is64_andListsTheCommands() {
        assertThat(run("rn", "x", "--", "true")).isEqualTo(64);
        assertThat(err.toString())
                .contains("unknown command 'rn': use run, update, status, list, break, verify, completion or help");
    }

    @Test
    void noCommand_is64() {
        assertThat(run()).isEqualTo(64);
        assertThat(err.toString()).contains("missing command");
    }

    @Test
    void help_listsExamplesAndExitCodes() {
        assertThat(run("run", "--help")).isEqualTo(0);
        assertThat(out.toString())
                .contains("Exit codes:")
                .contains("75")
                .contains("Examples:")
                .contains("NAME -- COMMAND [ARG...]")
                .contains("--hold-at-least");
        for (String c : new String[] {"status", "list", "break", "update", "verify"}) {
            out.getBuffer().setLength(0);
            assertThat(run(c, "--help")).isEqualTo(0);
            assertThat(out.toString()).as(c).contains("Exit codes:").contains("Examples:");
        }
        out.getBuffer().setLength(0);
        assertThat(run("--help")).isEqualTo(0);
        assertThat(out.toString())
                .contains("run")
                .contains("status")
                .contains("list")
                .contains("break")
                .contains("update")
                .contains("verify");
    }

    /**
     * picocli reads each exit code line as CODE:TEXT and drops a line without a ':' (issue 32:
     * {@code run --help} lost the ends of 64 and 69): each code is one line, wrapped by picocli.
     */
    @Test
    void help_everyExitCodeLineIsACode_soNoTextIsDropped() {
        CommandLine top = Main.commandLine(Env.system(), null);
        for (CommandLine c : java.util.stream.Stream.concat(
                        java.util.stream.Stream.of(top), top.getSubcommands().values().stream())
                .toList()) {
            CommandLine.Command command = c.getCommand().getClass().getAnnotation(CommandLine.Command.class);
            assertThat(command.exitCodeList()).as(c.getCommandName()).allMatch(line -> line.contains(":"));
        }
        assertThat(run("run", "--help")).isEqualTo(0);
        assertThat(out.toString().replaceAll("\\s+", " "))
                .contains("64 usage error: bad option or DURATION, no '--' or no" + " COMMAND, bad NAME or URI")
                .contains(
                        "69 the backend is unusable (directory missing and not creatable, not" + " writable, unsafe)");
    }

    @Test
    void version_printsIt() {
        assertThat(run("--version")).isEqualTo(0);
        assertThat(out.toString()).startsWith("interlock ");
    }

    @Test
    void optionOfAnotherCommand_is64_andNamesTheCommandsThatTakeIt() {
        assertThat(run("update", "--json", "f", "--", "true")).isEqualTo(64);
        assertThat(err.toString())
                .contains("interlock: update does not take --json; status, list and verify do")
                .contains("Try 'interlock update --help'");
        err.getBuffer().setLength(0);
        assertThat(run("break", "--wait=5s", "x")).isEqualTo(64);
        assertThat(err.toString()).contains("break does not take --wait; run and update do");
        err.getBuffer().setLength(0);
        assertThat(run("status", "-q", "x")).isEqualTo(64);
        assertThat(err.toString()).contains("status does not take -q; run and update do");
        err.getBuffer().setLength(0);
        assertThat(run("--json", "list")).isEqualTo(64);
        assertThat(err.toString()).contains("--json is an option of status, list and verify, not of interlock itself");
    }

    @Test
    void optionOfNoCommand_keepsPicocliSuggestions() {
        assertThat(run("update", "--no-wiat", "f", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("Unknown option: '--no-wiat'").contains("--no-wait");
    }

    @Test
    void update_takesTheWaitingOptionsOfRun() {
        assertThat(run("update", "-n", "-w", "1s", "f", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("-n/--no-wait and -w/--wait exclude each other");
        err.getBuffer().setLength(0);
        assertThat(run("update", "-w", "5 minutes", "f", "--", "true")).isEqualTo(64);
        assertThat(err.toString()).contains("'--wait'").contains("500ms, 30s, 5m, 1h");
    }

    @Test
    void update_leaseTooShort_is64_asForRun() throws IOException {
        assertThat(run(
                        "update",
                        "--backend",
                        backend(),
                        "--lease",
                        "10ms",
                        tmp.resolve("f").toString(),
                        "--",
                        "true"))
                .isEqualTo(64);
        assertThat(err.toString()).contains("bad --lease").contains("at least 100ms");
        assertThat(tmp.resolve("f")).doesNotExist();
    }

    @Test
    void list_names_printsOnlyTheNames_oneALine() throws IOException {
        String b = backend();
        assertThat(run("run", "--backend", b, "b.lock", "--", "true")).isZero();
        assertThat(run("run", "--backend", b, "a lock", "--", "true")).isZero();
        out.getBuffer().setLength(0);
        assertThat(run("list", "--names", "--backend", b)).as(err.toString()).isZero();
        assertThat(out.toString()).isEqualTo("a lock\nb.lock\n");
        assertThat(run("list", "--names", "--json", "--backend", b)).isEqualTo(64);
        assertThat(err.toString()).contains("--json and --names exclude each other");
    }
}
