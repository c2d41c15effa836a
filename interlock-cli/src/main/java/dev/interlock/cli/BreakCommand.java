package dev.interlock.cli;

import dev.interlock.Capability;
import dev.interlock.HolderInfo;
import dev.interlock.LockInfo;
import dev.interlock.LockSpace;
import dev.interlock.Owner;
import dev.interlock.internal.Leases;
import dev.interlock.spi.support.LockNames;
import java.io.PrintWriter;
import java.util.ArrayList;
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

/** {@code interlock break [--backend URI] NAME [--owner ID]}. */
@Command(
        mixinStandardHelpOptions = true,
        name = "break",
        header = "Remove a lock held by a holder that is gone (lease-based backends).",
        description = {
            "",
            "Removes the lock on NAME only if it is still held by the owner that was seen",
            "(or named with --owner, as printed by 'interlock status'): it can never remove",
            "a lock that someone else took a moment later. Without --owner the lock must",
            "have exactly one holder.",
            "",
            "Kernel locks (flock:) cannot be broken: they free when the holding process",
            "exits. For them, break says who holds the lock; stop that process instead."
        },
        parameterListHeading = "%nArguments:%n",
        optionListHeading = "%nOptions:%n",
        sortOptions = false,
        footerHeading = "%nExamples:%n",
        footer = {
            "  interlock status --backend dir:/mnt/shared/locks nightly",
            "  interlock break --backend dir:/mnt/shared/locks nightly \\",
            "      --owner web-3:4211:88123:9f0c1d2e3a4b5c6d"
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            " 0:the lock was removed",
            " 1:nothing removed: the lock is free, or no longer held by that owner",
            "64:usage error (bad option, lock name, owner id or URI; several holders and no --owner)",
            "69:the backend is unusable, there is no lock space there, or it cannot break locks (flock:)"
        })
final class BreakCommand implements Callable<Integer> {
    @ParentCommand
    InterlockCommand top;

    @Spec
    CommandSpec spec;

    @Mixin
    BackendOption backend;

    @Option(
            names = "--owner",
            paramLabel = "ID",
            description = "Break only if held by this owner (host:pid:start:nonce).")
    String owner;

    @Mixin
    Verbosity verbosity;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock name.")
    String name;

    @Override
    public Integer call() {
        BackendOption.checkName(name);
        if (owner != null) {
            try {
                Owner.parse(owner);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "bad --owner: " + e.getMessage());
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        try (LockSpace space = backend.open(top.env, false)) {
            LockInfo info = space.status(name);
            String quoted = LockNames.quote(name);
            if (!space.capabilities().contains(Capability.BREAK)) {
                boolean kernel = !Leases.leaseBased(space);
                throw new CliException(
                        ExitCodes.UNAVAILABLE,
                        space.uri() + " - " + quoted
                                + (kernel
                                        ? " is a kernel lock: it frees"
                                                + " when its holder exits and cannot be broken. "
                                        : " cannot be broken on this backend. ")
                                + (info.isFree()
                                        ? "It is free now."
                                        : "It is held " + describe(info.holders()) + "; stop that process to free it"
                                                + pidHint(info.holders()) + "."));
            }
            if (info.isFree()) {
                out.println(quoted + " is free: nothing to break");
                out.flush();
                return ExitCodes.CONFLICT;
            }
            String target = owner;
            if (target == null) {
                if (info.holders().size() > 1) {
                    throw new CommandLine.ParameterException(
                            spec.commandLine(),
                            quoted + " has "
                                    + info.holders().size() + " holders (" + describe(info.holders())
                                    + "); name the one to remove with --owner ID");
                }
                Optional<String> id = info.holders().get(0).ownerId();
                if (id.isEmpty()) {
                    throw new CliException(
                            ExitCodes.USAGE,
                            quoted + " is held " + describe(info.holders()) + ", which has no owner id to break by");
                }
                target = id.get();
            }
            boolean removed;
            try {
                removed = space.breakLock(name, target);
            } catch (UnsupportedOperationException e) {
                throw new CliException(
                        ExitCodes.UNAVAILABLE, e.getMessage() + "; " + quoted + " is held " + describe(info.holders()));
            }
            if (removed) {
                out.println("removed " + quoted + " held by " + target);
                out.flush();
                return ExitCodes.OK;
            }
            out.println("nothing removed: " + quoted + " is no longer held by " + target);
            out.flush();
            return ExitCodes.CONFLICT;
        }
    }

    private static String describe(List<HolderInfo> holders) {
        List<String> parts = new ArrayList<>();
        for (HolderInfo h : holders) {
            parts.add(h.describe());
        }
        return String.join("; ", parts);
    }

    private static String pidHint(List<HolderInfo> holders) {
        List<String> pids = new ArrayList<>();
        for (HolderInfo h : holders) {
            if (h.pid() > 0) {
                pids.add(String.valueOf(h.pid()));
            }
        }
        return pids.isEmpty() ? "" : " (e.g. kill " + String.join(" ", pids) + ")";
    }
}
