package dev.interlock.cli;

import dev.interlock.spi.support.Durations;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * The checks of {@code interlock verify}'s options against each other (a clear usage error, exit
 * 64, for any that do not go together), and the values they settle for the run: the paths of
 * {@code --keep} and {@code --shared-dir}, the number of workers, the share of shared
 * acquisitions and the semaphore limit.
 */
final class VerifyOptionChecks {
    private VerifyOptionChecks() {}

    static void settle(VerifyCommand c) {
        c.keep = path("--keep", c.keepOption, c);
        c.sharedDir = path("--shared-dir", c.sharedDirOption, c);
        if (c.limit != null && c.sharedRatioOption != null) {
            throw c.usage("--shared-ratio does not go with --limit: a semaphore permit has one holder, never shared");
        }
        c.sharedRatio = c.limit != null ? 0 : c.sharedRatioOption != null ? c.sharedRatioOption : 0.25;
        c.permitLimit = c.limit != null ? c.limit : 0;
        if (c.join != null && c.limit != null) {
            throw c.usage("--join takes the limit from the lead's plan: drop --limit");
        }
        c.processes = c.processesOption != null
                ? c.processesOption
                : c.limit != null && c.lead == null && c.join == null ? Math.min(256, Math.max(4, c.limit + 2)) : 4;
        if (c.processes < 1 || c.processes > 256) {
            throw c.usage("--processes must be between 1 and 256, was " + c.processes);
        }
        if (c.processes < 2 && c.lead == null && c.join == null) {
            throw c.usage("--processes must be at least 2 on one host: one process alone never contends");
        }
        if (c.limit != null && c.processes <= c.limit && c.lead == null && c.join == null) {
            throw c.usage("--processes must be more than --limit " + c.limit + " on one host, was " + c.processes
                    + ": with at most " + c.limit + " workers nobody ever waits for a permit, and one too many is"
                    + " never tried (give -p " + Math.min(256, c.limit + 2) + ", or a smaller --limit)");
        }
        if (c.duration != null && (c.duration.toMillis() < 100 || c.duration.toHours() > 24)) {
            throw c.usage("--duration must be between 100ms and 24h, was " + Durations.format(c.duration));
        }
        if (!(c.sharedRatio >= 0 && c.sharedRatio < 1)) {
            throw c.usage("--shared-ratio must be at least 0 and below 1 (some acquisitions must be exclusive), was "
                    + c.sharedRatio);
        }
        if (c.lease != null && c.lease.toMillis() < 100) {
            throw c.usage("--lease must be at least 100ms, was " + Durations.format(c.lease));
        }
        if (c.name != null) {
            BackendOption.checkName(c.name);
        }
        if (c.lead != null && c.join != null) {
            throw c.usage("--lead and --join exclude each other: one host leads, the others join");
        }
        for (String id : new String[] {c.lead, c.join}) {
            if (id != null && !VerifyRunDir.RUN_ID.matcher(id).matches()) {
                throw c.usage("bad RUN-ID '" + id + "': use 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.')");
            }
        }
        if (c.lead != null && c.hosts == null) {
            throw c.usage("--lead needs --hosts K: how many hosts take part, this one included");
        }
        if (c.hosts != null && c.lead == null) {
            throw c.usage("--hosts goes with --lead");
        }
        if (c.hosts != null && (c.hosts < 1 || c.hosts > 1000)) {
            throw c.usage("--hosts must be between 1 and 1000, was " + c.hosts);
        }
        if (c.join != null && (c.name != null || c.duration != null)) {
            throw c.usage(
                    "--join takes the lock name and the duration from the lead's plan: drop --name and --duration");
        }
        if (c.lead == null && c.join == null && (c.sharedDir != null || c.joinTimeout != null)) {
            throw c.usage((c.sharedDir != null ? "--shared-dir" : "--join-timeout") + " goes with --lead or --join");
        }
        if (c.keep != null) {
            Path k = c.keep.toAbsolutePath();
            if (Files.exists(k, LinkOption.NOFOLLOW_LINKS) && !VerifyFiles.isEmptyDirectory(k)) {
                throw c.usage(
                        "--keep " + c.keep + " exists and is not an empty directory: name a new or empty directory");
            }
        }
    }

    private static Path path(String option, String value, VerifyCommand c) {
        if (value == null) {
            return null;
        }
        try {
            if (value.isEmpty()) {
                throw new IllegalArgumentException("empty");
            }
            return Path.of(value);
        } catch (RuntimeException e) {
            throw c.usage(option + " '" + value + "' is not a usable path: give a directory such as /tmp/verify-run");
        }
    }
}
