package dev.interlock.cli;

import dev.interlock.Lease;
import dev.interlock.LockBackendException;
import dev.interlock.LockLostException;
import dev.interlock.LockSpace;
import dev.interlock.internal.LockNames;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code interlock update [--backend URI] [--lock NAME] FILE -- COMMAND [ARG...]}: the safe update
 * recipe (lock, read, write a temporary file, rename it over the real one, unlock) as one command.
 */
@Command(mixinStandardHelpOptions = true,
        name = "update",
        header = "Replace FILE with what COMMAND makes of it, under a lock.",
        customSynopsis = {"interlock update [--backend URI] [--lock NAME] FILE -- COMMAND [ARG...]"},
        description = {"",
                "Takes the lock (exclusive; NAME defaults to 'update:' plus FILE's absolute",
                "path), runs COMMAND with FILE's content on its stdin (empty if FILE does not",
                "exist) and its stdout going to a temporary file beside FILE. If COMMAND exits",
                "0 and the lock is still held, the temporary file is flushed to disk and",
                "renamed over FILE (atomically: readers see the old or the new content, never",
                "a mix), keeping FILE's permission bits. Otherwise FILE is left as it was and",
                "the temporary file removed. The lock is released in every case.",
                "",
                "Concurrent updates never lose one another's changes: each reads what the",
                "previous one wrote. COMMAND gets INTERLOCK_NAME, INTERLOCK_OWNER,",
                "INTERLOCK_TOKEN and INTERLOCK_FILE in its environment. If FILE is a symbolic",
                "link, the file it points to is updated and the link kept.",
                "",
                "If interlock is killed while COMMAND runs, FILE is not replaced."},
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        // "$${" is picocli's escape for a literal "${" (it would expand ${n:-0} to 0).
        footer = {"  # a counter that no concurrent update can lose",
                "  interlock update counter.txt -- sh -c 'read n; echo $(($${n:-0} + 1))'",
                "  # edit a shared config with sed, serialised with other writers of it",
                "  interlock update /etc/myapp/hosts -- sed '/^old-host$/d'",
                "  # the same lock as jobs that 'run' under the name 'catalog'",
                "  interlock update --lock catalog catalog.json -- jq '.version += 1'"},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
                "  0:FILE was replaced with COMMAND's output",
                "  N:COMMAND's own non-zero status; FILE is unchanged",
                "128+N:COMMAND was killed by signal N; FILE is unchanged",
                " 64:usage error: no '--' or no COMMAND, bad NAME or URI, FILE is a directory",
                "    or its directory does not exist",
                " 69:the backend is unusable",
                " 73:the temporary file could not be written or renamed (EX_CANTCREAT)",
                " 75:the lock was lost before FILE could be replaced; FILE is unchanged",
                "126:COMMAND could not be executed",
                "127:COMMAND was not found"})
final class UpdateCommand implements Callable<Integer> {
    static final int CANT_CREATE = 73;

    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    BackendOption backend;

    @Mixin
    Verbosity verbosity;

    @Option(names = "--lock", paramLabel = "NAME", description = "Lock name (default: 'update:' and FILE's absolute path).")
    String lockName;

    @Parameters(index = "0", arity = "1", paramLabel = "FILE", description = "The file to replace.")
    String file;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "COMMAND", description = "The command and its arguments, after '--'.")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        checkCommandLine();
        PrintWriter err = spec.commandLine().getErr();
        Path target = target();
        String name = BackendOption.checkName(lockName != null ? lockName : "update:" + target);
        try (LockSpace space = backend.open(top.env)) {
            Lease lease;
            try {
                lease = space.lock(name).acquire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CliException(ExitCodes.SIGNAL_BASE + 2, "interrupted while waiting for " + LockNames.quote(name));
            }
            try (lease) {
                return updateUnder(lease, target, err);
            }
        } catch (LockBackendException e) {
            throw new CliException(ExitCodes.UNAVAILABLE, e.getMessage(), e);
        }
    }

    /** FILE as an absolute path, symbolic links resolved (the link is kept, its target replaced). */
    private Path target() {
        Path p = Path.of(file).toAbsolutePath().normalize();
        try {
            if (Files.isSymbolicLink(p)) {
                p = p.toRealPath();
            }
        } catch (IOException e) {
            throw new CliException(ExitCodes.USAGE, "FILE " + p + " is a symbolic link that leads nowhere (" + e.getMessage() + ")");
        }
        if (Files.isDirectory(p)) {
            throw new CliException(ExitCodes.USAGE, "FILE " + p + " is a directory; update replaces a file");
        }
        Path dir = p.getParent();
        if (dir == null || !Files.isDirectory(dir)) {
            throw new CliException(ExitCodes.USAGE, "the directory of FILE, " + dir + ", does not exist; create it first");
        }
        return p;
    }

    private int updateUnder(Lease lease, Path target, PrintWriter err) {
        Path dir = target.getParent();
        Path tmp = dir.resolve("." + target.getFileName() + ".interlock-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + ".tmp");
        boolean exists = Files.exists(target, LinkOption.NOFOLLOW_LINKS);
        try {
            Files.createFile(tmp);
            if (exists) {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(target);
                Files.setPosixFilePermissions(tmp, perms);
            }
        } catch (IOException e) {
            throw new CliException(CANT_CREATE, "cannot create a temporary file in " + dir + ": " + e.getMessage()
                    + "; FILE is unchanged", e);
        }
        Process child = null;
        Thread cleanup = null;
        boolean replaced = false;
        try {
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectInput(exists ? ProcessBuilder.Redirect.from(target.toFile()) : ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(tmp.toFile())
                    .redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("INTERLOCK_NAME", lease.name());
            pb.environment().put("INTERLOCK_OWNER", lease.owner().id());
            pb.environment().put("INTERLOCK_TOKEN", Long.toString(lease.token()));
            pb.environment().put("INTERLOCK_FILE", target.toString());
            err.flush();
            try {
                child = pb.start();
            } catch (IOException e) {
                String msg = e.getMessage() == null ? "" : e.getMessage();
                int code = msg.contains("error=2,") ? ExitCodes.NOT_FOUND : ExitCodes.CANNOT_EXECUTE;
                throw new CliException(code, "cannot run " + LockNames.quote(command.get(0)) + ": " + msg, e);
            }
            Process started = child;
            cleanup = new Thread(() -> {
                started.destroy();
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort on the way out
                }
            }, "interlock-update-cleanup");
            Runtime.getRuntime().addShutdownHook(cleanup);
            int status;
            while (true) {
                try {
                    status = child.waitFor();
                    break;
                } catch (InterruptedException e) {
                    // keep waiting: the shutdown hook handles signals
                }
            }
            if (status != 0) {
                err.println("interlock: " + LockNames.quote(command.get(0)) + " exited with " + status + "; " + target + " is unchanged");
                return status;
            }
            try {
                lease.renew(); // the fencing check: still ours, right before the commit
            } catch (LockLostException e) {
                err.println("interlock: " + e.getMessage() + "; " + target + " is unchanged");
                return ExitCodes.LOCK_LOST;
            }
            if (!lease.isValid()) {
                err.println("interlock: the lease on " + LockNames.quote(lease.name()) + " ran out; " + target + " is unchanged");
                return ExitCodes.LOCK_LOST;
            }
            try {
                try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                try {
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    throw new IOException("the file system cannot rename atomically", e);
                }
                replaced = true;
                try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                    d.force(true);
                } catch (IOException ignored) {
                    // some file systems cannot sync a directory; the rename itself is done
                }
            } catch (IOException e) {
                throw new CliException(CANT_CREATE, "cannot replace " + target + ": " + e.getMessage() + "; FILE is unchanged", e);
            }
            return ExitCodes.OK;
        } finally {
            if (cleanup != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(cleanup);
                } catch (IllegalStateException ignored) {
                    // already shutting down
                }
            }
            if (!replaced) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    err.println("interlock: warning: cannot remove " + tmp + ": " + e.getMessage());
                }
            }
        }
    }

    private void checkCommandLine() {
        String synopsis = "interlock update [--backend URI] [--lock NAME] FILE -- COMMAND [ARG...]";
        int after = AfterDash.count(spec, synopsis);
        if (command.size() != after) {
            throw new CommandLine.ParameterException(spec.commandLine(), "FILE must be the one argument before '--': " + synopsis);
        }
    }
}
