package dev.interlock.cli;

import dev.interlock.InvalidLockNameException;
import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockRequest;
import dev.interlock.LockSpace;
import dev.interlock.file.AtomicFileException;
import dev.interlock.file.internal.Errno;
import dev.interlock.file.internal.LibcFiles;
import dev.interlock.file.internal.ReplaceTarget;
import dev.interlock.spi.support.LockNames;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code interlock update [--backend URI] [--lock NAME] [--token T] FILE -- COMMAND [ARG...]}: the
 * safe update recipe (lock, read, write a temporary file, rename it over the real one, unlock) as
 * one command, optionally fenced.
 *
 * <p>It often runs as root on files in directories that others can write, so FILE is handled
 * only through descriptors, by the same code as the library's {@link dev.interlock.file.AtomicFile}
 * ({@link ReplaceTarget}): a name planted or swapped in that directory can make the update fail,
 * never make it read or write another file.
 */
@Command(
        mixinStandardHelpOptions = true,
        name = "update",
        header = "Replace FILE with what COMMAND makes of it, under a lock.",
        customSynopsis = {
            "interlock update [-n | -w DURATION] [-E N] [-q] [--backend URI] [--lock NAME]",
            "                 [--lease DURATION] [--token T] FILE -- COMMAND [ARG...]"
        },
        description = {
            "",
            "Takes the lock (exclusive; NAME defaults to 'update:' plus FILE's real path:",
            "its directory's path with every link resolved, then its name), runs COMMAND",
            "with FILE's content on its stdin (empty if FILE does not exist) and its stdout",
            "going to a temporary file beside FILE. If COMMAND exits 0 and the lock is",
            "still held, the temporary file is flushed to disk and renamed over FILE",
            "(atomically: readers see the old or the new content, never a mix), with FILE's",
            "owner, group and mode. Otherwise FILE is left as it was and the temporary file",
            "removed. The lock is released in every case. Like run, it waits for the lock",
            "as long as it takes unless -n or -w say otherwise.",
            "",
            "Concurrent updates never lose one another's changes: each reads what the",
            "previous one wrote. COMMAND gets INTERLOCK_NAME, INTERLOCK_OWNER,",
            "INTERLOCK_TOKEN and INTERLOCK_FILE (FILE's real path) in its environment.",
            "",
            "FILE must be a regular file or not exist (a new one gets mode 0666 less the",
            "umask). A symbolic link as FILE is refused, not followed: pass the path it",
            "points to. If update cannot give the new content FILE's owner and group (it",
            "runs as neither the owner nor root), it refuses before running COMMAND.",
            "",
            "With --token T (a fencing token, such as the INTERLOCK_TOKEN that 'run' gives",
            "its command), the write is fenced: refused (exit 77) if a write with a larger",
            "token already landed on FILE; else FILE carries T from then on, in its",
            "extended attribute user.interlock.fence (see docs/fencing.md). Without",
            "--token, FILE keeps the token it has.",
            "",
            "If interlock is killed while COMMAND runs, FILE is not replaced; the next",
            "update of FILE removes the temporary file left behind."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        // "$${" is picocli's escape for a literal "${" (it would expand ${n:-0} to 0).
        footer = {
            "  # a counter that no concurrent update can lose",
            "  interlock update counter.txt -- sh -c 'read n; echo $(($${n:-0} + 1))'",
            "  # edit a shared config with sed, serialised with other writers of it",
            "  interlock update /etc/myapp/hosts -- sed '/^old-host$/d'",
            "  # the same lock as jobs that 'run' under the name 'catalog'",
            "  interlock update --lock catalog catalog.json -- jq '.version += 1'",
            "  # a job that must not write after it lost its lock (a stale holder)",
            "  interlock run nightly -- sh -c 'interlock update --token \"$INTERLOCK_TOKEN\" out.txt -- ./report'"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "  0:FILE was replaced with COMMAND's output",
            "  N:COMMAND's own non-zero status; FILE is unchanged",
            "  1:the lock is busy (-n) or the wait ran out (-w); set with -E",
            "128+N:COMMAND was killed by signal N; FILE is unchanged",
            " 64:usage error: no '--' or no COMMAND, bad NAME or URI, FILE is not a regular file (a directory,"
                    + " FIFO, device, socket or symbolic link), or its directory does not exist",
            " 69:the backend is unusable",
            " 71:the system refused to start COMMAND, or /proc is not mounted",
            " 73:FILE could not be read, or the temporary file could not be created with FILE's owner and group,"
                    + " written or renamed (EX_CANTCREAT); FILE is unchanged",
            " 75:the lock was lost before FILE could be replaced; FILE is unchanged",
            " 77:--token T was refused: a write with a larger token already landed on FILE (the lock T came with"
                    + " was lost since); FILE is unchanged",
            "126:COMMAND could not be executed",
            "127:COMMAND was not found"
        })
final class UpdateCommand implements Callable<Integer> {
    static final int CANT_CREATE = 73;

    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    WaitOptions waiting;

    @Mixin
    BackendOption backend;

    @Mixin
    Verbosity verbosity;

    @Option(names = "--lock", paramLabel = "NAME", description = "Lock name (default: 'update:' and FILE's real path).")
    String lockName;

    @Option(
            names = "--lease",
            paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Lease of lease-based backends (dir:, jdbc:, redis:), renewed while COMMAND"
                    + " runs. Default: the backend's (30s). Ignored by flock:, whose locks do not expire.")
    Duration lease;

    @Option(
            names = "--token",
            paramLabel = "T",
            description = "Fence the write with token T (a non-negative integer, such as $INTERLOCK_TOKEN).")
    String token;

    @Parameters(index = "0", arity = "1", paramLabel = "FILE", description = "The file to replace.")
    String file;

    @Parameters(
            index = "1..*",
            arity = "0..*",
            paramLabel = "COMMAND",
            description = "The command and its arguments, after '--'.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        checkCommandLine();
        long fence = parseToken();
        PrintWriter err = spec.commandLine().getErr();
        try (ReplaceTarget target = ReplaceTarget.open(fileBytes())) {
            target.check(); // a FIFO, device or link is an error at once, not after waiting for the lock
            String name = lockName != null ? BackendOption.checkName(lockName) : defaultLockName(target);
            try (LockSpace space = backend.open(top.env)) {
                LockRequest request = space.lock(name);
                if (lease != null) {
                    try {
                        LeaseArgument.apply(request, lease);
                    } catch (IllegalArgumentException e) {
                        throw new CommandLine.ParameterException(spec.commandLine(), "bad --lease: " + e.getMessage());
                    }
                }
                Optional<Lease> got = waiting.acquire(space, request, name, 0, err, -1);
                if (got.isEmpty()) {
                    return waiting.conflictExitCode;
                }
                try (Lease held = got.get()) {
                    return updateUnder(held, target, fence, err);
                }
            } catch (LockBackendException e) {
                throw new CliException(ExitCodes.UNAVAILABLE, e.getMessage(), e);
            }
        } catch (AtomicFileException e) {
            throw new CliException(exitCode(e.reason()), e.getMessage(), e);
        }
    }

    /**
     * {@code update:} and FILE's real path ({@link UpdateLockName}), when that makes a valid lock name. A real path too long
     * for one, or with control characters, is not the user's mistake: say so, and how to go on.
     */
    private static String defaultLockName(ReplaceTarget target) {
        String name = UpdateLockName.of(target.pathBytes());
        try {
            return LockNames.validate(name);
        } catch (InvalidLockNameException e) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "the default lock name, 'update:' and the real path of FILE, cannot be used: " + e.getMessage()
                            + "; name the lock with --lock NAME (every writer of " + target.path()
                            + " must use that same NAME)",
                    e);
        }
    }

    /** The exit status for a replacement that did not happen. */
    static int exitCode(AtomicFileException.Reason reason) {
        switch (reason) {
            case BAD_PATH:
                return ExitCodes.USAGE;
            case LEASE_NOT_VALID:
                return ExitCodes.LOCK_LOST;
            case FENCED:
                return ExitCodes.FENCED;
            case SYSTEM:
                return ExitCodes.OSERR;
            case IO:
            case FENCE_UNSUPPORTED:
            default:
                return CANT_CREATE;
        }
    }

    /** --token as a number, or -1 without it; checked before anything is locked or run. */
    private long parseToken() {
        if (token == null) {
            return -1;
        }
        String t = token.trim();
        if (t.isEmpty()) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "--token is empty (is INTERLOCK_TOKEN set? only 'run' sets it for its"
                            + " command): give a fencing token, a non-negative integer");
        }
        if (!t.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "--token " + LockNames.quote(token) + " is not a fencing token: give a"
                            + " non-negative integer, such as the INTERLOCK_TOKEN that 'run' gives its command");
        }
        try {
            return Long.parseLong(t);
        } catch (NumberFormatException e) {
            throw new CliException(
                    ExitCodes.USAGE,
                    "--token " + t + " is larger than any fencing token (at most " + Long.MAX_VALUE + ")");
        }
    }

    private int updateUnder(Lease lease, ReplaceTarget target, long fence, PrintWriter err) throws AtomicFileException {
        String shown = target.path();
        ReplaceTarget.Opened content = target.openContent();
        int stdin = -1;
        ReplaceTarget.Temp tmp = null;
        Thread cleanup = null;
        boolean replaced = false;
        try {
            if (content != null) {
                stdin = content.fd();
            } else {
                stdin = LibcFiles.openat(
                        LibcFiles.AT_FDCWD,
                        LibcFiles.cstring("/dev/null".getBytes(StandardCharsets.US_ASCII)),
                        LibcFiles.O_RDONLY | LibcFiles.O_CLOEXEC,
                        0);
                if (stdin < 0) {
                    throw new CliException(ExitCodes.OSERR, "cannot open /dev/null: " + Errno.describeLast());
                }
            }
            target.onGateWait(notice -> {
                err.println("interlock: " + notice);
                err.flush();
            });
            for (String note : target.removeLeftovers()) {
                err.println("interlock: " + note);
            }
            tmp = target.createTemp(content == null ? null : content.stat());
            if (fence >= 0) {
                target.setFence(
                        tmp, fence); // before COMMAND runs: a file system without user xattrs is an error at once
            }
            List<byte[]> env = List.of(
                    ("INTERLOCK_NAME=" + lease.name()).getBytes(StandardCharsets.UTF_8),
                    ("INTERLOCK_OWNER=" + lease.owner().id()).getBytes(StandardCharsets.UTF_8),
                    ("INTERLOCK_TOKEN=" + lease.token()).getBytes(StandardCharsets.UTF_8),
                    concat("INTERLOCK_FILE=".getBytes(StandardCharsets.US_ASCII), target.pathBytes()));
            err.flush();
            spec.commandLine().getOut().flush();
            System.out.flush();
            System.err.flush();
            ReplaceTarget.Temp made = tmp;
            cleanup = new Thread(() -> target.removeTemp(made), "interlock-update-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            int status;
            // COMMAND leads its own process group (with the terminal, if we have it), gets the
            // signals sent to us, and what it leaves running in its group is stopped before the
            // commit: a background child keeps its stdout, the temporary file, and would write
            // into FILE after the rename, outside the lock.
            try (CommandRunner runner = new CommandRunner(err, RunCommand.killGrace(null)).stoppingLeftovers()) {
                // stdin is FILE (or /dev/null), stdout the temporary file, stderr ours; nothing else.
                status = runner.run(
                        commandBytes(), new Spawner.Environment(env), new int[][] {{stdin, 0}, {tmp.fd(), 1}}, 3);
            } catch (Spawner.SpawnException e) {
                throw new CliException(
                        e.exitCode(),
                        "cannot run " + LockNames.quote(command.get(0)) + ": "
                                + (e.exitCode() == ExitCodes.NOT_FOUND ? "not found in PATH (ENOENT)" : e.getMessage())
                                + "; " + shown + " is unchanged",
                        e);
            }
            LibcFiles.close(stdin);
            stdin = -1;
            if (status != 0) {
                err.println("interlock: " + LockNames.quote(command.get(0)) + " exited with " + status + "; " + shown
                        + " is unchanged");
                return status;
            }
            try {
                lease.renew(); // the fencing check: still ours, right before the commit
            } catch (LockLostException e) {
                err.println("interlock: " + e.getMessage() + "; " + shown + " is unchanged");
                return ExitCodes.LOCK_LOST;
            }
            boolean ours =
                    target.commit(tmp, fence, lease); // checks the lease again, and the fence, just before the rename
            replaced = true;
            if (!ours) {
                err.println("interlock: " + shown
                        + " was replaced with COMMAND's output, but right after that someone who can" + " write "
                        + target.directory() + " put something else under its name: check it");
                return CANT_CREATE;
            }
            return ExitCodes.OK;
        } finally {
            if (cleanup != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(cleanup);
                } catch (IllegalStateException ignored) {
                    // already shutting down: the hook cleans up
                }
            }
            if (stdin >= 0) {
                LibcFiles.close(stdin);
            }
            if (tmp != null) {
                if (!replaced) {
                    target.removeTemp(tmp);
                }
                LibcFiles.close(tmp.fd());
            }
        }
    }

    /** The command's raw bytes when known (see {@link RawArgs}), else its UTF-8 encoding. */
    private List<byte[]> commandBytes() {
        List<byte[]> raw = top.rawArgs;
        if (raw != null && raw.size() >= command.size()) {
            return raw.subList(raw.size() - command.size(), raw.size());
        }
        List<byte[]> out = new ArrayList<>();
        for (String s : command) {
            out.add(s.getBytes(StandardCharsets.UTF_8));
        }
        return out;
    }

    /**
     * FILE as the bytes the user typed: a file name need not be valid in the locale's charset.
     * Found among the raw arguments before '--' as the one that decodes (as {@link Main} decodes
     * them) to FILE; its UTF-8 encoding otherwise.
     */
    private byte[] fileBytes() {
        byte[] utf8 = file.getBytes(StandardCharsets.UTF_8);
        List<byte[]> raw = top.rawArgs;
        if (raw == null) {
            return utf8;
        }
        int dash = raw.size() - command.size() - 1;
        if (dash < 0 || !Arrays.equals(raw.get(dash), new byte[] {'-', '-'})) {
            return utf8;
        }
        byte[] found = null;
        for (int i = 0; i < dash; i++) {
            byte[] r = raw.get(i);
            if (decoded(r).equals(file)) {
                if (found != null && !Arrays.equals(found, r)) {
                    return utf8;
                }
                found = r;
            }
        }
        return found != null ? found : utf8;
    }

    private static String decoded(byte[] raw) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw))
                    .toString();
        } catch (CharacterCodingException e) {
            String jnu = System.getProperty("sun.jnu.encoding");
            try {
                return new String(raw, jnu != null ? Charset.forName(jnu) : Charset.defaultCharset());
            } catch (RuntimeException e2) {
                return new String(raw, Charset.defaultCharset());
            }
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    private void checkCommandLine() {
        String synopsis = "interlock update [OPTIONS] FILE -- COMMAND [ARG...]";
        int after = AfterDash.count(spec, synopsis);
        if (command.size() != after) {
            throw new CommandLine.ParameterException(
                    spec.commandLine(), "FILE must be the one argument before '--': " + synopsis);
        }
        if (waiting.conflict() != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), waiting.conflict());
        }
    }
}
