#!/usr/bin/env bash
# Start-up time and peak memory of `interlock run x -- true` (flock:), `interlock status x` and
# `interlock --help` against a Java hello world started by the same JVM with the same flags (its
# own jar, its own start-up archive), for each JDK given, all in one hyperfine run.
#
#   interlock-bench/scripts/cli-startup.sh [RUNS] [JDK_HOME...]
#
# RUNS defaults to 30; the JDKs to /usr/lib/jvm/java-17-openjdk-* and every /usr/lib/jvm/temurin-2*.
# BASELINE_JAR=/path/to/an/older/interlock.jar adds that jar's run/status/--help (with its own
# archive) to the same run: the before/after of docs/benchmarks.md. Needs hyperfine and GNU time
# (Debian packages). Prints the machine, hyperfine's table, the CPU times and peak RSS, and the
# ratios. Run it on a quiet machine: other processes inflate and scatter wall times (the
# user+sys CPU times scatter less). INTERLEAVE=ROUNDS adds the same commands timed in
# interleaved rounds (interleave.py), which a machine whose load drifts during the run skews
# less than hyperfine's one command after the other: use it for before/after comparisons.
set -euo pipefail

runs=${1:-30}
shift || true
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install -y hyperfine)" >&2; exit 69; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install -y time)" >&2; exit 69; }
jdks=("$@")
if [ ${#jdks[@]} -eq 0 ]; then
    for j in /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/temurin-2*; do
        [ -x "$j/bin/java" ] && [ ! -L "$j" ] && jdks+=("$j")
    done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/cli-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The launcher's flags (bin/interlock).
flags=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmn4m -Xss512k -XX:-UsePerfData)
INTERLOCK_NO_TRAIN=1 "$root/bin/interlock" --version >/dev/null # builds the jar if needed
jar=$root/interlock-cli/target/interlock.jar
native=$work/native
mkdir -p "$native"
unzip -p "$jar" com/sun/jna/linux-x86-64/libjnidispatch.so > "$native/libjnidispatch.so"

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

release() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"; }

# archive NAME JAVA RELEASE ARGS...: trains NAME's archive with ARGS, prints the flag using it.
archive() {
    local name=$1 java=$2 rel=$3
    shift 3
    if [ "$rel" -ge 24 ]; then
        "$java" "${flags[@]}" -XX:AOTCacheOutput="$work/$name.aot" "$@" >/dev/null 2>&1
        echo "-XX:AOTCache=$work/$name.aot"
    else
        "$java" "${flags[@]}" -XX:ArchiveClassesAtExit="$work/$name.jsa" "$@" >/dev/null 2>&1
        echo "-XX:SharedArchiveFile=$work/$name.jsa"
    fi
}

export INTERLOCK_BACKEND="flock:$work/locks"
mkdir -p "$work/locks"
args=()
rss_lines=()
jars=("new=$jar")
[ -n "${BASELINE_JAR:-}" ] && jars=("old=$BASELINE_JAR" "${jars[@]}")
for jdk in "${jdks[@]}"; do
    java=$jdk/bin/java
    rel=$(release "$jdk")
    extra=()
    [ "$rel" -ge 22 ] && extra=(--enable-native-access=ALL-UNNAMED)
    a=$(archive "hello$rel" "$java" "$rel" -cp "$work/hello.jar" Hello)
    hello="$java ${flags[*]} $a -cp $work/hello.jar Hello"
    args+=(-n "hello $rel" "$hello")
    rss_lines+=("hello $rel|$hello")
    for j in "${jars[@]}"; do
        tag=${j%%=*}
        # A copy per JDK: a start-up archive records its jar's modification time, and a JDK 17
        # archive whose jar was copied again (for the next JDK) is silently not used.
        cp "${j#*=}" "$work/$tag$rel.jar"
        opts=()
        [ "$tag" = old ] && [ -n "${BASELINE_OPTS:-}" ] && read -r -a opts <<< "$BASELINE_OPTS"
        # As bin/interlock starts it: the jar on the class path and the main class named (the
        # baseline jar with -jar, as the launcher did before).
        launch=(-cp "$work/$tag$rel.jar" dev.interlock.cli.Main)
        [ "$tag" = old ] && launch=(-jar "$work/$tag$rel.jar")
        a=$(archive "$tag$rel" "$java" "$rel" "${extra[@]}" ${opts[@]+"${opts[@]}"} "-Djna.boot.library.path=$native" \
            -Dinterlock.cli.training=true "${launch[@]}" run --backend "flock:$work/train" t -- true)
        base="$java ${flags[*]} ${extra[*]} ${opts[*]+${opts[*]}} $a -Djna.boot.library.path=$native ${launch[*]}"
        args+=(-n "$tag $rel run" "$base run x -- true" -n "$tag $rel status" "$base status x" -n "$tag $rel --help" "$base --help")
        rss_lines+=("$tag $rel run|$base run x -- true")
    done
done

echo "machine: $(nproc) cpus, $(awk '/model name/ {$1=$2=$3=""; print; exit}' /proc/cpuinfo | sed 's/^ *//'),"\
     "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
hyperfine -N --style basic --warmup 3 --runs "$runs" --export-json "$work/h.json" "${args[@]}" >/dev/null

if [ -n "${INTERLEAVE:-}" ]; then
    pairs=()
    for ((i = 0; i < ${#args[@]}; i += 3)); do
        pairs+=("${args[i+1]}=${args[i+2]}")
    done
    python3 "$root/interlock-bench/scripts/interleave.py" "$INTERLEAVE" "${pairs[@]}" > "$work/interleaved"
fi

# Peak RSS: median of 11 runs each.
: > "$work/rss"
for line in "${rss_lines[@]}"; do
    name=${line%%|*}
    read -r -a cmd <<< "${line#*|}"
    out=()
    for i in $(seq 1 11); do
        out+=("$(/usr/bin/time -f %M "${cmd[@]}" 2>&1 >/dev/null | tail -1)")
    done
    echo "$name|$(printf '%s\n' "${out[@]}" | sort -n | sed -n 6p)" >> "$work/rss"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$work/h.json" "$work/rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
rss = dict(l.strip().split("|") for l in open(sys.argv[2]) if l.strip())
print("| command | mean | median | min | user | sys | user+sys | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
hello = {}
for x in r:
    name = x["command"]
    if name.startswith("hello"):
        hello[name.split()[1]] = x
    m = rss.get(name)
    print(f"| {name} | {x['mean']*1000:.1f} ms | {x['median']*1000:.1f} ms | {x['min']*1000:.1f} ms | "
          f"{x['user']*1000:.1f} ms | {x['system']*1000:.1f} ms | {(x['user']+x['system'])*1000:.1f} ms | "
          f"{m + ' KiB' if m else '-'} |")
print()
for x in r:
    name = x["command"]
    if name.startswith("hello"):
        continue
    h = hello[name.split()[1]]
    cpu = (x["user"] + x["system"]) / (h["user"] + h["system"])
    line = f"{name}: median {x['median']/h['median']:.2f}x hello, min {x['min']/h['min']:.2f}x, CPU {cpu:.2f}x"
    if name in rss:
        line += f", peak RSS {int(rss[name])/int(rss['hello ' + name.split()[1]]):.2f}x"
    print(line)
PY
if [ -n "${INTERLEAVE:-}" ]; then
    echo
    cat "$work/interleaved"
fi
