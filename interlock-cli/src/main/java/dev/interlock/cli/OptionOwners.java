package dev.interlock.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;

/**
 * Which commands take an option, so that an option given to a command that does not take it is
 * a usage error naming the ones that do ({@code update does not take --json; status, list and
 * verify do}). Only asked on that error path: it builds every command's model.
 */
final class OptionOwners {
    private OptionOwners() {}

    /** The commands (in the order of the tool's help) that take {@code arg}, an option possibly with {@code =VALUE}. */
    static List<String> commandsTaking(String arg) {
        int eq = arg.startsWith("--") ? arg.indexOf('=') : -1;
        String option = eq > 0 ? arg.substring(0, eq) : arg;
        List<String> owners = new ArrayList<>();
        for (Map.Entry<String, CommandLine> sub :
                Main.commandLine(Env.system(), null).getSubcommands().entrySet()) {
            if (!sub.getKey().equals("help") && sub.getValue().getCommandSpec().findOption(option) != null) {
                owners.add(sub.getKey());
            }
        }
        return owners;
    }

    /**
     * The message for {@code arg} given to {@code command} (a subcommand's name, or null for the
     * tool itself) when some other command takes it; null when none does (picocli's own message
     * and its suggestions then say more).
     */
    static String misplaced(String command, String arg) {
        if (!arg.startsWith("-") || arg.equals("--")) {
            return null;
        }
        List<String> owners = commandsTaking(arg);
        owners.remove(command);
        if (owners.isEmpty()) {
            return null;
        }
        int eq = arg.startsWith("--") ? arg.indexOf('=') : -1;
        String option = eq > 0 ? arg.substring(0, eq) : arg;
        String list = words(owners);
        if (command == null) {
            return option + " is an option of " + list + ", not of interlock itself: put it after the command";
        }
        return command + " does not take " + option + "; " + list + (owners.size() == 1 ? " does" : " do");
    }

    /** "a", "a and b", "a, b and c". */
    private static String words(List<String> items) {
        if (items.size() == 1) {
            return items.get(0);
        }
        return String.join(", ", items.subList(0, items.size() - 1)) + " and " + items.get(items.size() - 1);
    }
}
