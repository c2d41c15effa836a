package dev.interlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A verify run on several hosts through the caches of an NFS client (issue 32: on NFSv4.2 joiners
 * were told "no such file" for 28 s after the lead's files existed, and the lead removed the run
 * after a fixed 30 s while they still read it). The file system is seen through {@link NfsClientView},
 * which caches like an NFS client; time passes on {@link FakePace}, without sleeping.
 */
class VerifyRunDirTest {
    private static final VerifyRunDir.Plan PLAN =
            new VerifyRunDir.Plan("job", Duration.ofSeconds(5).toNanos(), 2, 3);

    @TempDir
    Path tmp;

    final FakePace pace = new FakePace();

    /** The shared directory may be made, never its parents: a missing parent is a typo or an unmounted file system (issue 26, 9). */
    @Test
    void lead_sharedDirectoryWithoutItsParent_is69_andCreatesNothing() {
        Path shared = tmp.resolve("not-mounted/shared");
        assertThatThrownBy(() -> VerifyRunDir.lead(shared, "r1", PLAN, VerifyRunDir.View.FILE_SYSTEM, pace))
                .isInstanceOfSatisfying(
                        CliException.class, e -> assertThat(e.exitCode()).isEqualTo(69))
                .hasMessageContaining(tmp.resolve("not-mounted") + " does not exist");
        assertThat(tmp.resolve("not-mounted")).doesNotExist();
    }

    @Test
    void join_aPlanLookedForBeforeItExisted_isFoundOnceItIsListed_thoughALookupStillSaysMissing() throws Exception {
        Path shared = tmp.resolve("locks/.interlock-verify");
        Files.createDirectories(shared.getParent());
        NfsClientView joiner = new NfsClientView(tmp, 0);
        assertThatThrownBy(() -> joiner.readLines(shared.resolve("r1/plan"))).isInstanceOf(NoSuchFileException.class);
        pace.at(
                Duration.ofSeconds(3),
                () -> VerifyRunDir.lead(shared, "r1", PLAN, VerifyRunDir.View.FILE_SYSTEM, pace));

        VerifyRunDir run = VerifyRunDir.join(shared, "r1", Duration.ofMinutes(2), joiner, pace);

        assertThat(run.plan()).isEqualTo(PLAN); // the limit of a semaphore run too
        assertThat(shared.resolve("r1/slots"))
                .as("the permit slots of every host")
                .isDirectory();
        assertThat(pace.elapsed())
                .as("found at the first look after the lead wrote it")
                .isLessThan(Duration.ofSeconds(4));
    }

    @Test
    void join_throughACachedMissingAnswer_aLookupAloneNeverSeesThePlan() throws Exception {
        // What the client does without the listings: the cached answer outlives any deadline.
        Path shared = Files.createDirectories(tmp.resolve("shared"));
        NfsClientView joiner = new NfsClientView(tmp, 0);
        assertThatThrownBy(() -> joiner.readLines(shared.resolve("r1/plan"))).isInstanceOf(NoSuchFileException.class);
        VerifyRunDir.lead(shared, "r1", PLAN, VerifyRunDir.View.FILE_SYSTEM, pace);
        assertThatThrownBy(() -> joiner.readLines(shared.resolve("r1/plan"))).isInstanceOf(NoSuchFileException.class);
        assertThat(VerifyRunDir.listed(joiner, tmp, shared.resolve("r1/plan"))).isTrue();
        assertThat(joiner.readLines(shared.resolve("r1/plan"))).first().isEqualTo("interlock-verify-plan 1");
    }

    @Test
    void await_listingsThatLag_areLookedAtAgain_untilEveryHostIsSeen() throws Exception {
        VerifyRunDir lead = leadRun();
        Path shared = lead.run.getParent();
        Path a = lead.newHostDir("a");
        Path b = lead.newHostDir("b");
        NfsClientView view = new NfsClientView(tmp, 6);
        VerifyRunDir joiner = VerifyRunDir.join(shared, "r1", Duration.ofMinutes(2), view, pace);
        assertThat(joiner.await("host", joiner.deadlineIn(Duration.ZERO), n -> {}))
                .as("looked before they existed")
                .isEmpty();
        lead.mark(a, "host");
        lead.mark(b, "host");
        List<Integer> seen = new ArrayList<>();

        List<Path> hosts = joiner.await("host", joiner.deadlineIn(Duration.ofMinutes(2)), seen::add);

        assertThat(hosts).containsExactlyInAnyOrder(a, b);
        assertThat(seen).startsWith(0).endsWith(2);
        assertThat(pace.pauses)
                .as("the pause doubles, up to its longest")
                .contains(50L, 100L, 200L, 400L, 800L)
                .allMatch(ms -> ms <= VerifyRunDir.LONGEST_PAUSE_MS);
    }

    @Test
    void await_theRunRemovedUnderAJoiner_isExit69_withWhatHappened_notAnInternalError() throws Exception {
        VerifyRunDir lead = leadRun();
        Path shared = lead.run.getParent();
        Path a = lead.newHostDir("a");
        lead.mark(a, "host");
        VerifyRunDir joiner = VerifyRunDir.join(shared, "r1", Duration.ofMinutes(2), new NfsClientView(tmp, 0), pace);
        pace.at(Duration.ofSeconds(30), () -> VerifyFiles.deleteTree(lead.run));

        assertThatThrownBy(() -> joiner.await("host", joiner.deadlineIn(Duration.ofMinutes(2)), n -> {}))
                .isInstanceOfSatisfying(
                        CliException.class, e -> assertThat(e.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE))
                .hasMessage("cannot read the other hosts' records: the run directory " + lead.run
                        + " was removed (by the lead,"
                        + " which waits up to --join-timeout for every host to read it, or by hand); this host's result is unknown:"
                        + " run again with a new RUN-ID");
    }

    @Test
    void removeOnceEveryHostRead_waitsForALateHost_thenRemovesTheRun() throws Exception {
        VerifyRunDir lead = leadRun();
        Path a = lead.newHostDir("a");
        Path b = lead.newHostDir("b");
        lead.mark(a, "merged");
        pace.at(Duration.ofSeconds(50), () -> lead.mark(b, "merged"));

        List<Path> unread = lead.removeOnceEveryHostRead(lead.deadlineIn(Duration.ofMinutes(2)));

        assertThat(unread).isEmpty();
        assertThat(lead.run).doesNotExist();
        assertThat(pace.elapsed()).isBetween(Duration.ofSeconds(50), Duration.ofSeconds(51));
    }

    @Test
    void removeOnceEveryHostRead_aHostThatNeverSaysItRead_leavesTheRunInPlace_andIsNamed() throws Exception {
        VerifyRunDir lead = leadRun();
        Path a = lead.newHostDir("a");
        Path b = lead.newHostDir("b");
        lead.mark(a, "merged");

        List<Path> unread = lead.removeOnceEveryHostRead(lead.deadlineIn(Duration.ofMinutes(2)));

        assertThat(unread).containsExactly(b);
        assertThat(lead.run.resolve("plan")).exists();
        assertThat(pace.elapsed()).isEqualTo(Duration.ofMinutes(2));
    }

    /** The lead's run r1 in {@code tmp/shared}, made on the real file system. */
    private VerifyRunDir leadRun() throws IOException {
        return VerifyRunDir.lead(
                Files.createDirectories(tmp.resolve("shared")), "r1", PLAN, VerifyRunDir.View.FILE_SYSTEM, pace);
    }

    /**
     * The file system as an NFS client with {@code lookupcache=all} sees it: a name looked up while
     * it was missing stays missing (a negative dentry) until its directory is listed again (opening
     * a directory revalidates it: close-to-open); and each directory's first {@code lagging}
     * listings show what it held when it was first listed (its attribute cache not yet expired).
     */
    static final class NfsClientView implements VerifyRunDir.View {
        private final Path root;
        private final int lagging;
        private final Set<Path> missing = new HashSet<>();
        private final Map<Path, List<String>> firstListing = new HashMap<>();
        private final Map<Path, Integer> listings = new TreeMap<>();

        NfsClientView(Path root, int lagging) {
            this.root = root;
            this.lagging = lagging;
        }

        @Override
        public List<String> list(Path dir) throws IOException {
            lookup(dir);
            if (!Files.isDirectory(dir)) {
                throw new NotDirectoryException(dir.toString());
            }
            List<String> names;
            try (Stream<Path> s = Files.list(dir)) {
                names = s.map(p -> p.getFileName().toString()).toList();
            }
            int n = listings.merge(dir, 1, Integer::sum);
            firstListing.putIfAbsent(dir, names);
            if (n <= lagging) {
                names = firstListing.get(dir);
            }
            for (String name : names) {
                missing.remove(dir.resolve(name)); // revalidated with its directory
            }
            return names;
        }

        @Override
        public List<String> readLines(Path file) throws IOException {
            lookup(file);
            return Files.readAllLines(file);
        }

        /** Resolves {@code p} name by name below the root, as the kernel does, each answer "missing" cached. */
        private void lookup(Path p) throws NoSuchFileException {
            Path at = root;
            for (Path name : root.relativize(p)) {
                at = at.resolve(name);
                if (missing.contains(at)) {
                    throw new NoSuchFileException(at.toString(), null, "cached: no such file");
                }
                if (!Files.exists(at)) {
                    missing.add(at);
                    throw new NoSuchFileException(at.toString());
                }
            }
        }
    }

    /** A clock that moves only when waited on, and runs what is due at the times it passes. */
    static final class FakePace implements VerifyRunDir.Pace {
        interface Step {
            void run() throws Exception;
        }

        private long now = 1_000_000_000L;
        private final long start = now;
        private final TreeMap<Long, List<Step>> due = new TreeMap<>();
        final List<Long> pauses = new ArrayList<>();

        void at(Duration after, Step step) {
            due.computeIfAbsent(now + after.toNanos(), t -> new ArrayList<>()).add(step);
        }

        Duration elapsed() {
            return Duration.ofNanos(now - start);
        }

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void pause(long nanos) {
            pauses.add(nanos / 1_000_000);
            now += nanos;
            while (!due.isEmpty() && due.firstKey() <= now) {
                for (Step s : due.pollFirstEntry().getValue()) {
                    try {
                        s.run();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            }
        }
    }
}
