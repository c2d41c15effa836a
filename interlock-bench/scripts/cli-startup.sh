#!/usr/bin/env bash
# Start-up time and peak memory of `interlock run x -- true` against a Java hello world started
# the same way (same JVM flags, its own tiny jar and its own AppCDS archive).
#
#   interlock-bench/scripts/cli-startup.sh [RUNS]      (default 30; needs hyperfine and GNU time)
#
# Prints the machine, the commands, hyperfine's table and the ratios; docs/benchmarks.md
# records a run. Run it on a quiet machine: other processes inflate and scatter the numbers.
set -euo pipefail

runs=${1:-30}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install -y hyperfine)" >&2; exit 69; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install -y time)" >&2; exit 69; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cli-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT

flags=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn4m -Xss512k -XX:-UsePerfData -Xshare:auto)

# interlock: the launcher builds the jar and its CDS archive on first use.
"$root/bin/interlock" --version >/dev/null
jar=$root/interlock-cli/target/interlock.jar
jsa=$(ls -t "$root"/interlock-cli/target/interlock-*.jsa | head -1)

# The baseline: hello world, same flags, own jar, own dynamic CDS archive.
mkdir -p "$work/hello"
cat > "$work/hello/Hello.java" <<'JAVA'
public class Hello {
    public static void main(String[] args) {
        System.out.println("hello");
    }
}
JAVA
javac --release 17 -d "$work/hello" "$work/hello/Hello.java"
printf 'Main-Class: Hello\n' > "$work/hello/manifest.txt"
jar cfm "$work/hello.jar" "$work/hello/manifest.txt" -C "$work/hello" Hello.class
java "${flags[@]}" "-XX:ArchiveClassesAtExit=$work/hello.jsa" -jar "$work/hello.jar" >/dev/null 2>&1

export INTERLOCK_BACKEND="flock:$work/locks"
hello=(java "${flags[@]}" "-XX:SharedArchiveFile=$work/hello.jsa" -jar "$work/hello.jar")
native=$root/interlock-cli/target/native
direct=(java "${flags[@]}" "-XX:SharedArchiveFile=$jsa" "-Djna.boot.library.path=$native" -jar "$jar" run x -- true)
launcher=("$root/bin/interlock" run x -- true)

echo "machine: $(nproc) cpus, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo | sed 's/^ *//'),"\
     "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "java: $(java -version 2>&1 | head -1)"
echo

hyperfine -N --style basic --warmup 5 --runs "$runs" --export-json "$work/h.json" \
    -n hello "${hello[*]}" \
    -n "interlock (java -jar)" "${direct[*]}" \
    -n "interlock (bin/interlock)" "${launcher[*]}"

# Peak RSS: median of 11 runs each.
rss() {
    local i out=()
    for i in $(seq 1 11); do
        out+=("$(/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1)")
    done
    printf '%s\n' "${out[@]}" | sort -n | sed -n 6p
}
rss_hello=$(rss "${hello[@]}")
rss_direct=$(rss "${direct[@]}")

python3 - "$work/h.json" "$rss_hello" "$rss_direct" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
h, d, l = r["hello"], r["interlock (java -jar)"], r["interlock (bin/interlock)"]
rh, rd = int(sys.argv[2]), int(sys.argv[3])
print()
print("| command | mean | median | min | user | sys | peak RSS |")
print("|---|---|---|---|---|---|---|")
for name, x, rss in (("hello", h, rh), ("interlock run x -- true (java -jar)", d, rd), ("bin/interlock run x -- true", l, None)):
    print(f"| {name} | {x['mean']*1000:.1f} ms | {x['median']*1000:.1f} ms | {x['min']*1000:.1f} ms | "
          f"{x['user']*1000:.1f} ms | {x['system']*1000:.1f} ms | {str(rss) + ' KiB' if rss else '-'} |")
print()
cpu = lambda x: x["user"] + x["system"]
print(f"time ratio (median, java -jar): {d['median']/h['median']:.2f}x   (target <= 2x)")
print(f"time ratio (min, java -jar):    {d['min']/h['min']:.2f}x   (less sensitive to other load)")
print(f"CPU ratio (user+sys, java -jar): {cpu(d)/cpu(h):.2f}x")
print(f"time ratio (median, launcher):  {l['median']/h['median']:.2f}x")
print(f"peak RSS ratio:                 {rd/rh:.2f}x   (target <= 1.5x)")
PY
