package dev.interlock.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts a Java main class in a new JVM with this JVM's class path, for multi-process tests. */
public final class ChildJvm {
    private ChildJvm() {}

    public static ProcessBuilder builder(Class<?> main, List<String> jvmArgs, String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-Xshare:auto");
        // JDK 22+ warns on stderr when JNA loads its library without it; JDK 17 accepts it too.
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.addAll(jvmArgs);
        cmd.add(main.getName());
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    public static Process start(Class<?> main, String... args) throws IOException {
        return builder(main, List.of(), args)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
    }
}
