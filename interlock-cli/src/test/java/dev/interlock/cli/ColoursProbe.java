package dev.interlock.cli;

import picocli.CommandLine;

/** Prints the tool's and picocli's answer to "help in colour?" in this process: {@code ours picocli}. */
public final class ColoursProbe {
    private ColoursProbe() {}

    public static void main(String[] args) {
        boolean ours = FastPath.colours();
        System.out.println(ours + " " + CommandLine.Help.Ansi.AUTO.enabled());
    }
}
