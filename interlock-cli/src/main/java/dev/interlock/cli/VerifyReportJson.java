package dev.interlock.cli;

import dev.interlock.check.Handoffs;
import java.nio.file.Path;

/** A {@link VerifyReport} as the one JSON object (one line) of {@code interlock verify --json}. */
final class VerifyReportJson {
    private VerifyReportJson() {}

    /** One JSON object (one line). */
    static String render(VerifyReport r, FileSystemProbe.Report fs, Path kept) {
        Json j = new Json().beginObject();
        j.name("result")
                .value(
                        r.exitCode() == VerifyReport.HELD
                                ? "held"
                                : r.exitCode() == VerifyReport.VIOLATED ? "violated" : "incomplete");
        j.name("exitCode").value(r.exitCode());
        j.name("backend").value(r.setup.backend());
        j.name("name").value(r.setup.name());
        j.name("runId").value(r.setup.runId());
        j.name("processes").value(r.setup.processes());
        j.name("durationMs").value(r.setup.durationNanos() / 1_000_000);
        j.name("sharedPercent").value(Math.round(r.setup.sharedRatio() * 100));
        if (r.setup.limit() > 0) {
            j.name("limit").value(r.setup.limit());
            j.name("mostAtOnce").value(Math.max(0, r.mostAtOnce));
        } else {
            j.name("limit").nullValue();
            j.name("mostAtOnce").nullValue();
        }
        j.name("acquisitions").value(r.acquisitions);
        j.name("exclusive").value(r.exclusive);
        j.name("shared").value(r.shared);
        j.name("throughputPerSecond").value(r.throughput);
        j.name("violations").beginArray();
        for (String v : r.violations) {
            j.value(v);
        }
        j.endArray();
        j.name("violationsTruncated").value(r.violationsTruncated);
        if (r.setup.limit() > 0) {
            permits(j, r);
        } else {
            counter(j, r);
        }
        handoffsAndTheRest(j, r, fs, kept);
        return j.endObject().toString();
    }

    /** A permit run: what came back after it (there is no counter). */
    private static void permits(Json j, VerifyReport r) {
        j.name("counter").nullValue();
        j.name("permits").beginObject().name("fullButKilled").value(r.fullButKilled);
        j.name("notReturned").beginArray();
        r.notReturned.forEach(j::value);
        j.endArray().name("killedStillHeld").beginArray();
        r.killedStillHeld.forEach(j::value);
        j.endArray().endObject();
    }

    private static void counter(Json j, VerifyReport r) {
        j.name("permits").nullValue();
        j.name("counter").beginObject().name("start").value(r.counterStart);
        if (r.counterEnd >= 0) {
            j.name("end").value(r.counterEnd);
        } else {
            j.name("end").nullValue();
        }
        j.name("text").value(r.counterText);
        j.name("exclusiveSections")
                .value(r.exclusive)
                .name("killedExclusiveSections")
                .value(r.killedExclusive);
        if (r.lostIncrements() >= 0) {
            j.name("lostIncrements").value(r.lostIncrements());
        } else {
            j.name("lostIncrements").nullValue();
        }
        j.endObject();
    }

    private static void handoffsAndTheRest(Json j, VerifyReport r, FileSystemProbe.Report fs, Path kept) {
        j.name("handoff").beginObject().name("count").value(r.handoffs.length);
        for (int p : new int[] {50, 95, 99}) {
            if (r.handoffs.length > 0) {
                j.name("p" + p + "Micros").value(Handoffs.percentile(r.handoffs, p) / 1000);
            } else {
                j.name("p" + p + "Micros").nullValue();
            }
        }
        if (r.handoffs.length > 0) {
            j.name("maxMicros").value(r.handoffs[r.handoffs.length - 1] / 1000);
        } else {
            j.name("maxMicros").nullValue();
        }
        j.endObject();
        if (r.longestWait >= 0) {
            j.name("longestWait")
                    .beginObject()
                    .name("micros")
                    .value(r.longestWait / 1000)
                    .name("by")
                    .value(r.longestWaitBy)
                    .name("unfinished")
                    .value(r.longestWaitUnfinished)
                    .endObject();
        } else {
            j.name("longestWait").nullValue();
        }
        if (r.setup.crashTest()) {
            j.name("crashTest")
                    .beginObject()
                    .name("kills")
                    .value(r.killedBy.size())
                    .name("recoveryMicros")
                    .beginArray();
            for (long ns : r.recoveries) {
                if (ns >= 0) {
                    j.value(ns / 1000);
                } else {
                    j.nullValue();
                }
            }
            j.endArray().endObject();
        } else {
            j.name("crashTest").nullValue();
        }
        j.name("lostLeases").value(r.lostLeases);
        if (fs != null) {
            j.name("fileSystem")
                    .beginObject()
                    .name("path")
                    .value(fs.path().toString())
                    .name("type")
                    .value(fs.type());
            j.name("statfsType").value(fs.magic() >= 0 ? String.format("0x%X", fs.magic()) : null);
            j.name("network").value(fs.network());
            j.name("nfsVersion").value(fs.nfsVersion());
            j.name("source").value(fs.mount() != null ? fs.mount().source() : null);
            j.name("mountPoint").value(fs.mount() != null ? fs.mount().mountPoint() : null);
            j.name("mountOptions").value(fs.mount() != null ? fs.mount().mountOptions() : null);
            j.name("superOptions").value(fs.mount() != null ? fs.mount().superOptions() : null);
            j.endObject();
        } else {
            j.name("fileSystem").nullValue();
        }
        j.name("warnings").beginArray();
        for (String w : r.warnings) {
            j.value(w);
        }
        j.endArray();
        j.name("problems").beginArray();
        for (String p : r.problems) {
            j.value(p);
        }
        j.endArray();
        j.name("hosts").beginArray();
        for (VerifyHostLog.HostLog h : r.hosts) {
            j.beginObject()
                    .name("host")
                    .value(h.host())
                    .name("clock")
                    .value(h.clock())
                    .name("processes")
                    .value(h.processes())
                    .name("acquisitions")
                    .value(h.sections().size())
                    .name("killed")
                    .value(h.killed().size())
                    .name("runMs")
                    .value(h.runNanos() / 1_000_000)
                    .endObject();
        }
        j.endArray();
        j.name("kept").value(kept != null ? kept.toString() : null);
    }
}
