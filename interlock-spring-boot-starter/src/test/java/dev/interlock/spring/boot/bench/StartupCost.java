package dev.interlock.spring.boot.bench;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What the starter adds to the start of a minimal Boot application ({@link MinimalApplication}),
 * measured in one run: each start a fresh JVM, the variants alternated, on class paths built from
 * this JVM's:
 * <ol>
 *   <li>{@code boot}: Spring Boot and Spring only (what {@code spring-boot-starter} brings, less
 *       logging), no lock space;</li>
 *   <li>{@code by hand mem:} / {@code by hand flock:}: plus {@code interlock-core} (and
 *       {@code interlock-file} with JNA), the lock space a {@code @Bean} written by hand
 *       ({@link ByHandApplication}): what an application does without the starter;</li>
 *   <li>{@code starter mem:} / {@code starter flock:}: plus the starter and what it brings instead,
 *       the lock space from {@code interlock.uri}.</li>
 * </ol>
 * For each it prints the medians of the process's wall time (spawn to exit), of the JVM's uptime
 * when the context was ready, and of the CPU time the process had used by then, and their
 * difference to {@code boot} and to the same lock space by hand. On a machine shared with other
 * work the CPU time is the steadiest of the three: waiting for a core is not counted in it.
 *
 * <p>Run (after {@code ./mvnw -pl interlock-spring-boot-starter -am test-compile dependency:build-classpath
 * -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test}):
 * <pre>{@code
 * M=interlock-spring-boot-starter
 * java -cp "$M/target/test-classes:$M/target/classes:$(cat $M/target/cp.txt)" dev.interlock.spring.boot.bench.StartupCost 15
 * }</pre>
 */
public final class StartupCost {
    private StartupCost() {}

    /** Jars of a plain Boot application without logging back-end: spring-boot-starter less Logback, plus slf4j for Interlock. */
    private static final List<String> BOOT = List.of(
            "spring-boot-4",
            "spring-boot-autoconfigure-4",
            "spring-core-",
            "spring-context-",
            "spring-beans-",
            "spring-aop-",
            "spring-expression-",
            "commons-logging-",
            "jspecify-",
            "micrometer-observation-",
            "micrometer-commons-",
            "slf4j-api-",
            "slf4j-simple-",
            "snakeyaml-");
    /** What the starter brings (its compile dependencies) besides Boot. */
    private static final List<String> STARTER = List.of(
            "interlock-spring-boot-starter",
            "interlock-core",
            "interlock-shedlock",
            "interlock-spring/",
            "interlock-spring-0",
            "interlock-micrometer");

    private static final List<String> FILE = List.of("interlock-file", "jna-");
    private static final List<String> CORE = List.of("interlock-core");

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
        List<String> all = Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator));
        String app = all.stream()
                .filter(e -> e.endsWith("test-classes") || e.endsWith("test-classes/"))
                .findFirst()
                .orElseThrow();
        Path dir = Files.createTempDirectory("startup-cost");
        Map<String, Variant> variants = new LinkedHashMap<>();
        String flock = "flock:" + dir;
        variants.put("boot", new Variant(MinimalApplication.class, classPath(all, app, BOOT), List.of(), null));
        variants.put(
                "by hand mem:",
                new Variant(
                        ByHandApplication.class,
                        classPath(all, app, concat(BOOT, CORE)),
                        List.of("--bench.uri=mem:bench"),
                        null));
        variants.put(
                "starter mem:",
                new Variant(
                        MinimalApplication.class,
                        classPath(all, app, concat(BOOT, STARTER)),
                        List.of("--interlock.uri=mem:bench"),
                        "by hand mem:"));
        variants.put(
                "by hand flock:",
                new Variant(
                        ByHandApplication.class,
                        classPath(all, app, concat(BOOT, CORE, FILE)),
                        List.of("--bench.uri=" + flock),
                        null));
        variants.put(
                "starter flock:",
                new Variant(
                        MinimalApplication.class,
                        classPath(all, app, concat(BOOT, STARTER, FILE)),
                        List.of("--interlock.uri=" + flock),
                        "by hand flock:"));
        for (int i = 0; i < 2; i++) { // warm the file cache, not counted
            for (Variant v : variants.values()) {
                v.start();
            }
        }
        for (int i = 0; i < rounds; i++) {
            for (Variant v : variants.values()) {
                long[] r = v.start();
                v.wall.add(r[0]);
                v.ready.add(r[1]);
                v.cpu.add(r[2]);
            }
        }
        Variant base = variants.get("boot");
        System.out.printf(
                "| class path | wall ms | ready ms | CPU ms at ready | CPU vs boot | CPU vs by hand | ready vs by hand |%n"
                        + "|---|---|---|---|---|---|---|%n");
        for (Map.Entry<String, Variant> e : variants.entrySet()) {
            Variant v = e.getValue();
            Variant hand = v.byHand == null ? null : variants.get(v.byHand);
            System.out.printf(
                    "| %s | %d | %d | %d | %+.1f%% | %s | %s |%n",
                    e.getKey(),
                    median(v.wall),
                    median(v.ready),
                    median(v.cpu),
                    change(v.cpu, base.cpu),
                    hand == null ? "" : String.format("%+.1f%%", change(v.cpu, hand.cpu)),
                    hand == null ? "" : String.format("%+.1f%%", change(v.ready, hand.ready)));
        }
        System.out.println("(medians of " + rounds + " starts each, alternated; " + Runtime.version() + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs)");
    }

    @SafeVarargs
    private static List<String> concat(List<String>... lists) {
        List<String> out = new ArrayList<>();
        for (List<String> l : lists) {
            out.addAll(l);
        }
        return out;
    }

    private static String classPath(List<String> all, String app, List<String> wanted) {
        Predicate<String> keep = entry -> {
            String e = entry.replace('\\', '/');
            String name = e.endsWith("/target/classes") || e.endsWith("/target/classes/")
                    ? e.replaceAll("/target/classes/?$", "/")
                    : e.substring(e.lastIndexOf('/') + 1);
            String module = name.endsWith("/") ? name.substring(name.lastIndexOf('/', name.length() - 2) + 1) : name;
            return wanted.stream().anyMatch(module::startsWith);
        };
        List<String> cp = new ArrayList<>(List.of(app));
        all.stream().filter(keep).forEach(cp::add);
        return String.join(File.pathSeparator, cp);
    }

    private static double change(List<Long> values, List<Long> base) {
        return 100.0 * (median(values) - median(base)) / median(base);
    }

    private static long median(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    private static final class Variant {
        final Class<?> main;
        final String classPath;
        /** The variant with the same lock space by hand, to compare with (null: none). */
        final String byHand;

        final List<String> args;
        final List<Long> wall = new ArrayList<>();
        final List<Long> ready = new ArrayList<>();
        final List<Long> cpu = new ArrayList<>();

        Variant(Class<?> main, String classPath, List<String> args, String byHand) {
            this.main = main;
            this.classPath = classPath;
            this.byHand = byHand;
            this.args = args;
        }

        /** One start: {wall ms, uptime at ready ms, CPU ms at ready}. */
        long[] start() throws Exception {
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xshare:auto",
                    "-cp",
                    classPath,
                    main.getName(),
                    "--spring.main.banner-mode=off"));
            cmd.addAll(args);
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            long readyAt = -1;
            long cpuAt = -1;
            StringBuilder out = new StringBuilder();
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    out.append(l).append('\n');
                    if (l.startsWith("ready ")) {
                        readyAt = Long.parseLong(l.split(" ")[1]);
                        cpuAt = Long.parseLong(l.split(" ")[2]);
                    }
                }
            }
            int code = p.waitFor();
            long wall = (System.nanoTime() - t0) / 1_000_000;
            if (code != 0 || readyAt < 0) {
                throw new IllegalStateException("the application did not start (exit " + code + "):\n" + out);
            }
            return new long[] {wall, readyAt, cpuAt};
        }
    }
}
