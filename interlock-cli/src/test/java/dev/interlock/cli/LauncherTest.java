package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.interlock.testkit.Timing;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The choices of {@code bin/interlock}, run on an installed layout ({@code bin/interlock},
 * {@code lib/interlock.jar}) with made-up JDKs whose {@code java} logs how it was called and
 * writes the archives it is asked to write.
 */
class LauncherTest {
    @TempDir
    Path tmp;

    Path install;
    Path jvms;
    Path log;
    final Map<String, String> env = new HashMap<>();

    @BeforeEach
    void setUp() throws IOException {
        Path launcher = Path.of(System.getProperty("user.dir")).getParent().resolve("bin/interlock");
        install = tmp.resolve("install");
        Files.createDirectories(install.resolve("bin"));
        Files.createDirectories(install.resolve("lib"));
        Files.copy(launcher, install.resolve("bin/interlock"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.writeString(install.resolve("lib/interlock.jar"), "not a jar: the fake java does not read it");
        jvms = Files.createDirectories(tmp.resolve("jvm"));
        log = tmp.resolve("java.log");
        env.put("INTERLOCK_JVM_DIR", jvms.toString());
        env.put("FAKE_LOG", log.toString());
        env.remove("JAVA_HOME");
    }

    /** A JDK at {@code dir} whose release file says {@code version}. */
    Path jdk(Path dir, String version) throws IOException {
        Files.createDirectories(dir.resolve("bin"));
        Files.writeString(
                dir.resolve("release"), "IMPLEMENTOR=\"fake\"\nJAVA_VERSION=\"" + version + "\"\nOS_NAME=\"Linux\"\n");
        Path java = dir.resolve("bin/java");
        Files.writeString(
                java,
                String.join(
                        "\n",
                        "#!/bin/sh",
                        "home=${0%/bin/java}",
                        "echo \"$home $*\" >> \"$FAKE_LOG\"",
                        "for a; do",
                        "  case $a in",
                        "    -XX:ArchiveClassesAtExit=*|-XX:AOTMode=record) [ -n \"$FAKE_TRAIN_FAIL\" ] && exit 1 ;;",
                        "  esac",
                        "done",
                        "for a; do",
                        "  case $a in",
                        "    -XX:ArchiveClassesAtExit=*) echo archive > \"${a#*=}\" ;;",
                        "    -XX:AOTCache=*) case \" $* \" in *' -XX:AOTMode=create '*) echo cache > \"${a#*=}\" ;; esac ;;",
                        "  esac",
                        "done",
                        "echo \"java $home\"",
                        ""));
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return dir;
    }

    Path jdk(String name, String version) throws IOException {
        return jdk(jvms.resolve(name), version);
    }

    /** Runs the launcher; returns its stdout (the fake java's line). */
    String launch(String... args) throws Exception {
        List<String> cmd =
                new ArrayList<>(List.of("bash", install.resolve("bin/interlock").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("JAVA_HOME");
        pb.environment().remove("INTERLOCK_JAVA");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(0);
        return out.trim();
    }

    List<String> calls() throws IOException {
        return Files.exists(log) ? Files.readAllLines(log) : List.of();
    }

    /** The java command of the run itself (the one with the user's arguments, not a training's). */
    String runCall(String marker) throws IOException {
        return calls().stream()
                .filter(l -> l.endsWith(marker))
                .reduce((a, b) -> b)
                .orElseThrow();
    }

    @Test
    void picksTheNewestJdkFrom17On_whateverJavaHomeSays() throws Exception {
        env.put("INTERLOCK_NO_TRAIN", "1");
        jdk("jdk-11", "11.0.22");
        jdk("jdk-17", "17.0.15");
        Path jdk21 = jdk("jdk-21", "21.0.3");
        jdk("jdk-25", "25.0.3");
        jdk("jdk-8", "1.8.0_402");
        Files.createDirectories(jvms.resolve("no-java"));
        Files.writeString(jvms.resolve("no-java/release"), "JAVA_VERSION=\"99\"\n");
        env.put("JAVA_HOME", jdk21.toString());
        assertThat(launch("--version")).isEqualTo("java " + jvms.resolve("jdk-25"));

        Path jdk26 = jdk(tmp.resolve("elsewhere/jdk-26"), "26-ea");
        env.put("JAVA_HOME", jdk26.toString());
        assertThat(launch("--version")).isEqualTo("java " + jdk26);
    }

    @Test
    void javaHome_winsATie_andNoJdkAtAllMeansJavaOnThePath() throws Exception {
        env.put("INTERLOCK_NO_TRAIN", "1");
        jdk("a-jdk-21", "21.0.1");
        Path home = jdk(tmp.resolve("home-jdk"), "21.0.2");
        env.put("JAVA_HOME", home.toString());
        assertThat(launch("--version")).isEqualTo("java " + home);

        env.remove("JAVA_HOME");
        env.put("INTERLOCK_JVM_DIR", tmp.resolve("empty").toString());
        Path path = jdk(tmp.resolve("on-path"), "17.0.1");
        env.put("PATH", path.resolve("bin") + ":/usr/bin:/bin");
        assertThat(launch("--version")).isEqualTo("java " + path);
    }

    @Test
    void interlockJava_overridesTheChoice_asABinaryOrAJdk() throws Exception {
        env.put("INTERLOCK_NO_TRAIN", "1");
        jdk("jdk-25", "25.0.3");
        Path jdk17 = jdk(tmp.resolve("mine/jdk-17"), "17.0.15");
        env.put("INTERLOCK_JAVA", jdk17.resolve("bin/java").toString());
        assertThat(launch("--version")).isEqualTo("java " + jdk17);
        env.put("INTERLOCK_JAVA", jdk17.toString());
        assertThat(launch("--version")).isEqualTo("java " + jdk17);
    }

    /**
     * The jar on the class path with the main class named (no -jar, whose reading of the jar costs
     * every start), and on JDK 22+ the manifest's Enable-Native-Access as an option; a java whose
     * release the launcher cannot tell gets -jar, which reads the manifest itself.
     */
    @Test
    void classPathAndMainClass_withNativeAccessFrom22_orJarWhereTheReleaseIsUnknown() throws Exception {
        env.put("INTERLOCK_NO_TRAIN", "1");
        String jar = install.resolve("lib/interlock.jar").toString();
        Path jdk17 = jdk("jdk-17", "17.0.15");
        env.put("INTERLOCK_JAVA", jdk17.toString());
        launch("run", "x", "--", "on17");
        assertThat(runCall(" on17"))
                .endsWith(" -cp " + jar + " dev.interlock.cli.Main run x -- on17")
                .doesNotContain("--enable-native-access")
                .doesNotContain("-jar");

        Path jdk25 = jdk("jdk-25", "25.0.3");
        env.put("INTERLOCK_JAVA", jdk25.toString());
        launch("run", "x", "--", "on25");
        assertThat(runCall(" on25"))
                .endsWith(" --enable-native-access=ALL-UNNAMED -cp " + jar + " dev.interlock.cli.Main run x -- on25");

        Path unknown = Files.createDirectories(tmp.resolve("unknown/bin"));
        Files.copy(jdk25.resolve("bin/java"), unknown.resolve("java"));
        env.put("INTERLOCK_JAVA", unknown.resolve("java").toString());
        launch("run", "x", "--", "unknown");
        assertThat(runCall(" unknown"))
                .endsWith(" -jar " + jar + " run x -- unknown")
                .doesNotContain(" -cp ");
    }

    @Test
    void javaThroughALink_isKnownByTheJdkItIsIn() throws Exception {
        Path jdk25 = jdk(tmp.resolve("real/jdk-25"), "25.0.3");
        Path bin = Files.createDirectories(tmp.resolve("usr/bin"));
        Files.createSymbolicLink(bin.resolve("java"), jdk25.resolve("bin/java"));
        env.put("INTERLOCK_JAVA", bin.resolve("java").toString());
        launch("run", "x", "--", "first");
        Path lib = install.resolve("lib");
        await().atMost(Timing.seconds(30))
                .until(() -> listing(lib).stream().anyMatch(n -> n.endsWith(".aot"))
                        && listing(lib).stream().noneMatch(n -> n.endsWith(".training")));
    }

    @Test
    void jdk24On_trainsAnAotCacheInTheBackground_thenUsesIt() throws Exception {
        jdk("jdk-25", "25.0.3");
        String first = launch("run", "x", "--", "first");
        assertThat(first).isEqualTo("java " + jvms.resolve("jdk-25"));
        assertThat(runCall("run x -- first")).doesNotContain("AOTCache");
        Path lib = install.resolve("lib");
        await().atMost(Timing.seconds(30))
                .until(() -> listing(lib).stream().anyMatch(n -> n.endsWith(".aot"))
                        && listing(lib).stream().noneMatch(n -> n.endsWith(".training") || n.endsWith(".tmp")));
        launch("run", "x", "--", "second");
        assertThat(runCall("run x -- second"))
                .contains("-XX:AOTCache=" + lib + "/interlock-")
                .contains(".aot ");
        assertThat(calls())
                .anyMatch(l -> l.contains("-XX:AOTMode=record")
                        && l.contains("-Dinterlock.cli.training=true")
                        && l.contains("run --backend flock:"));
        assertThat(calls()).anyMatch(l -> l.contains("-XX:AOTMode=on"));
    }

    @Test
    void beforeJdk24_trainsAnAppCdsArchive_thenUsesIt() throws Exception {
        jdk("jdk-21", "21.0.3");
        launch("run", "x", "--", "first");
        Path lib = install.resolve("lib");
        await().atMost(Timing.seconds(30))
                .until(() -> listing(lib).stream().anyMatch(n -> n.endsWith(".jsa"))
                        && listing(lib).stream().noneMatch(n -> n.endsWith(".training")));
        launch("run", "x", "--", "second");
        assertThat(runCall("run x -- second"))
                .contains("-XX:SharedArchiveFile=" + lib + "/interlock-")
                .contains(".jsa ");
        assertThat(runCall("run x -- second")).doesNotContain("AOT");
    }

    @Test
    void failedTraining_isNotRetried_andRunsGoOnWithoutArchive() throws Exception {
        jdk("jdk-25", "25.0.3");
        env.put("FAKE_TRAIN_FAIL", "1");
        launch("run", "x", "--", "first");
        Path lib = install.resolve("lib");
        await().atMost(Timing.seconds(30))
                .until(() -> listing(lib).stream().anyMatch(n -> n.endsWith(".failed"))
                        && listing(lib).stream().noneMatch(n -> n.endsWith(".training")));
        long trainings =
                calls().stream().filter(l -> l.contains("AOTMode=record")).count();
        launch("run", "x", "--", "second");
        assertThat(runCall("run x -- second")).doesNotContain("AOTCache");
        assertThat(calls().stream().filter(l -> l.contains("AOTMode=record")).count())
                .isEqualTo(trainings);
        assertThat(listing(lib)).noneMatch(n -> n.endsWith(".tmp") || n.endsWith(".conf"));
    }

    @Test
    void concurrentFirstRuns_trainOnce_andAllRun() throws Exception {
        jdk("jdk-25", "25.0.3");
        List<Process> ps = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ProcessBuilder pb = new ProcessBuilder(
                            "bash", install.resolve("bin/interlock").toString(), "run", "x", "--", "n" + i)
                    .redirectErrorStream(true);
            pb.environment().remove("JAVA_HOME");
            pb.environment().putAll(env);
            ps.add(pb.start());
        }
        for (Process p : ps) {
            assertThat(p.waitFor(Timing.seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                    .isTrue();
            assertThat(p.exitValue()).isEqualTo(0);
        }
        Path lib = install.resolve("lib");
        await().atMost(Timing.seconds(30)).until(() -> listing(lib).stream().noneMatch(n -> n.endsWith(".training")));
        assertThat(calls().stream().filter(l -> l.contains("AOTMode=record")).count())
                .isEqualTo(1);
        assertThat(listing(lib)).anyMatch(n -> n.endsWith(".aot")).noneMatch(n -> n.endsWith(".tmp"));
    }

    @Test
    void readOnlyInstall_runsWithoutTraining() throws Exception {
        Assumptions.assumeFalse("root".equals(System.getProperty("user.name")), "root can write a read-only directory");
        jdk("jdk-25", "25.0.3");
        Path lib = install.resolve("lib");
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("r-xr-xr-x"));
        try {
            launch("run", "x", "--", "first");
            assertThat(calls()).noneMatch(l -> l.contains("AOTMode"));
            assertThat(listing(lib)).containsExactly("interlock.jar");
        } finally {
            Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
    }

    private static List<String> listing(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
