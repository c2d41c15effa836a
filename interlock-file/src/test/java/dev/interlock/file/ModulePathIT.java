package dev.interlock.file;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.testkit.Timing;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The core and the file backends as JPMS modules: an application module that requires only
 * {@code dev.interlock} finds {@code mem:}, {@code flock:} and {@code dir:} through the service
 * loader on the module path, and locks and waits on each (natives through JNA, inotify included);
 * one that also requires {@code dev.interlock.file} makes a fenced {@code AtomicFile} write.
 * Runs after packaging, on the built jars.
 */
class ModulePathIT {
    @TempDir
    Path tmp;

    @Test
    void anApplicationModule_locksOnEveryFileBackend_fromTheModulePath() throws Exception {
        List<String> path = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String n = Path.of(e).getFileName().toString();
            if (n.matches("(interlock-core|interlock-file)-.*\\.jar|jna-[0-9.]+\\.jar|slf4j-api-.*\\.jar")
                    || e.endsWith("interlock-core" + File.separator + "target" + File.separator + "classes")) {
                path.add(e);
            }
        }
        assertThat(String.join(" ", path))
                .as("module path")
                .contains("interlock-file-")
                .contains("jna-")
                .contains("slf4j-api-");
        Path src = Files.createDirectories(tmp.resolve("src/app"));
        Files.writeString(
                tmp.resolve("src/module-info.java"),
                "module app { requires dev.interlock; requires dev.interlock.file; }");
        Files.writeString(
                src.resolve("Main.java"),
                String.join(
                        "\n",
                        "package app;",
                        "import dev.interlock.*;",
                        "import java.time.Duration;",
                        "import java.util.concurrent.*;",
                        "public class Main { public static void main(String[] a) throws Exception {",
                        "  for (String uri : a) {",
                        "    try (LockSpace s = Interlock.open(uri)) {",
                        "      ExecutorService ex = Executors.newSingleThreadExecutor();",
                        "      Future<?> f;",
                        "      try (Lease l = s.acquire(\"x\")) {",
                        "        f = ex.submit(() -> { try (Lease w = s.acquire(\"x\", Duration.ofSeconds(20))) { return w.token(); } });",
                        "      }",
                        "      System.out.println(uri + \" ok \" + f.get(30, TimeUnit.SECONDS));",
                        "      ex.shutdown();",
                        "    }",
                        "  }",
                        "  dev.interlock.file.AtomicFile f = dev.interlock.file.AtomicFile.of(java.nio.file.Path.of(System.getProperty(\"file\")));",
                        "  f.write(\"fenced\".getBytes(), 9);",
                        "  System.out.println(\"atomic \" + new String(f.read().orElseThrow()) + \" \" + f.fence().getAsLong());",
                        "}}"));
        String mp = String.join(File.pathSeparator, path);
        Path out = tmp.resolve("out");
        Path javac = Path.of(System.getProperty("java.home"), "bin", "javac");
        Process c = new ProcessBuilder(
                        javac.toString(),
                        "-d",
                        out.toString(),
                        "--module-path",
                        mp,
                        tmp.resolve("src/module-info.java").toString(),
                        src.resolve("Main.java").toString())
                .redirectErrorStream(true)
                .start();
        assertThat(c.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        assertThat(c.exitValue())
                .as(new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
                .isZero();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(
                        java.toString(),
                        "-Dfile=" + tmp.resolve("data"),
                        "--module-path",
                        mp + File.pathSeparator + out,
                        "--add-modules",
                        "dev.interlock.file",
                        "-m",
                        "app/app.Main",
                        "mem:modules",
                        "flock:" + tmp.resolve("flock"),
                        "dir:" + tmp.resolve("dir"))
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                .isTrue();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(text).isZero();
        assertThat(text)
                .contains("mem:modules ok")
                .contains("flock:" + tmp.resolve("flock") + " ok")
                .contains("dir:" + tmp.resolve("dir") + " ok")
                .contains("atomic fenced 9");
    }
}
