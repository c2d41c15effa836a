#!/usr/bin/env bash
# Same-run A/B of two builds of the benchmark jar: uncontended cycles and cross-process hand-off
# on flock:, dir:, jdbc: (PostgreSQL) and redis:, the jars taking turns (A B A B ...), so that two
# runs of one jar show the noise the comparison must beat.
#
#   git worktree add /tmp/ab-old <commit before the change>
#   (cd /tmp/ab-old && ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true)
#   ./mvnw -q -pl interlock-bench -am package -Dmaven.test.skip=true
#   interlock-bench/scripts/ab-jars.sh /tmp/ab-old/interlock-bench/target/benchmarks.jar \
#       interlock-bench/target/benchmarks.jar 2 > ab.txt
#
# Output: one line per measurement, "ROUND JAR WHAT VALUE UNIT", then the medians per jar.
set -euo pipefail
old=$1 new=$2 rounds=${3:-2}
dir=$(mktemp -d /tmp/interlock-ab.XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$dir/results
: > "$out"

measure() { # round label jar
  local r=$1 label=$2 jar=$3
  # flock: and dir: uncontended acquire + release (JMH, µs per cycle)
  java -jar "$jar" 'FlockBenchmark.interlockExclusive$|DirBenchmark.interlockExclusive$' \
      -f 1 -wi 3 -w 1 -i 5 -r 1 -bm avgt -tu us -rf csv -rff "$dir/jmh.csv" > "$dir/jmh.log" 2>&1
  awk -F, -v r="$r" -v l="$label" 'NR > 1 { sub(/\r$/, ""); gsub(/"/, "", $1); n = $1; sub(/.*\.bench\./, "", n); if ($8 != "") n = n "[others=" $8 "]";
      printf "%s %s %s %s us/cycle\n", r, l, n, $5 }' "$dir/jmh.csv" >> "$out"
  # jdbc: and redis: uncontended cycles/s, one thread, against the raw floor of the same run
  for b in jdbc redis; do
    java -Dbench.columns=1x1 -Dbench.warmup=3 -Dbench.seconds=5 -cp "$jar" dev.interlock.bench.LockThroughput \
        "$b" 1 interlock floor > "$dir/lt.log" 2>&1
    awk -v r="$r" -v l="$label" -v b="$b" '/^round 1  1 thread +Interlock/ { for (i = 1; i <= NF; i++) if ($(i+1) == "cycles/s") v = $i;
        printf "%s %s %s-cycles %s cycles/s\n", r, l, b, v }' "$dir/lt.log" >> "$out"
  done
  # hand-off p50 between two processes
  java -cp "$jar" dev.interlock.bench.Handoff 1000 /tmp flock dir jdbc/interlock redis/interlock > "$dir/ho.log" 2>&1
  awk -v r="$r" -v l="$label" '/ n=[0-9]+ +p50 / { for (i = 1; i <= NF; i++) if ($i == "p50") v = $(i+1);
      k = $0; sub(/ +n=.*/, "", k); gsub(/ /, "_", k); printf "%s %s handoff-p50:%s %s us\n", r, l, k, v }' "$dir/ho.log" >> "$out"
}

for r in $(seq 1 "$rounds"); do
  if (( r % 2 )); then order="A B"; else order="B A"; fi
  for l in $order; do
    if [[ $l == A ]]; then measure "$r" A "$old"; else measure "$r" B "$new"; fi
    cat "$out"; : > "$out"
  done
done
