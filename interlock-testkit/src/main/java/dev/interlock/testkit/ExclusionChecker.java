package dev.interlock.testkit;

import dev.interlock.check.ExclusionCheck;
import dev.interlock.check.Section;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The tests' view of the core's {@link ExclusionCheck}: critical sections logged by workers on
 * this host (one monotonic clock). No exclusive section overlaps any other section; fencing
 * tokens increase with acquisition order (a section that ended before another began has a smaller
 * token whenever one of the two is exclusive); no token repeats. {@link MultiProcessChecker} adds
 * the counter rules, which need no clock.
 */
public final class ExclusionChecker {
    private ExclusionChecker() {}

    /** One critical section on this host's monotonic clock. */
    public record Interval(String source, boolean exclusive, long token, long enter, long exit) {
        @Override
        public String toString() {
            return (exclusive ? "EX" : "SH") + " token " + token + " [" + enter + ", " + exit + "] from " + source;
        }

        Section section() {
            return new Section(source, exclusive, token, -1, "", enter, exit);
        }
    }

    /** What the logs showed. */
    public record Report(int sections, int exclusive, List<String> violations) {
        public boolean ok() {
            return violations.isEmpty();
        }

        static Report of(ExclusionCheck.Report r) {
            return new Report(r.sections(), r.exclusive(), r.violations());
        }
    }

    /** Reads logs of {@code MODE TOKEN ENTER EXIT} lines (or the core's longer records). */
    public static List<Interval> read(List<Path> logs) throws IOException {
        List<Interval> all = new ArrayList<>();
        for (Section s : sections(logs)) {
            all.add(new Interval(s.source(), s.exclusive(), s.token(), s.enter(), s.exit()));
        }
        return all;
    }

    /** Reads logs into the core's records (keeping counter values where the workers wrote them). */
    public static List<Section> sections(List<Path> logs) throws IOException {
        List<Section> all = new ArrayList<>();
        for (Path p : logs) {
            for (String line : Files.readAllLines(p)) {
                if (!line.isBlank()) {
                    all.add(Section.parse(p.getFileName().toString(), line));
                }
            }
        }
        return all;
    }

    public static Report check(List<Interval> all) {
        List<Section> sections = new ArrayList<>();
        for (Interval i : all) {
            sections.add(i.section());
        }
        return Report.of(ExclusionCheck.check(sections));
    }
}
