#!/usr/bin/env python3
"""Times commands in interleaved rounds: round i runs every command once (in reverse order on odd
rounds), so that a machine getting busier or quieter during the run weighs on all commands alike,
which hyperfine's one-command-after-the-other does not do. Used by cli-startup.sh (INTERLEAVE=1).

    interleave.py ROUNDS 'NAME=COMMAND' ...

A command named "hello REL" is the baseline of every "* REL *" command: the table gives each
command's median, its ratio to the baseline's median and the median of its paired differences
(this round's time minus the baseline's in the same round).
"""
import shlex
import statistics
import subprocess
import sys
import time

rounds = int(sys.argv[1])
cmds = [a.split("=", 1) for a in sys.argv[2:]]
times = {name: [] for name, _ in cmds}


def once(cmd):
    start = time.perf_counter()
    subprocess.run(shlex.split(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


for _ in range(3):  # warm-up: file caches, the archives' pages
    for _, cmd in cmds:
        once(cmd)
for i in range(rounds):
    for name, cmd in (cmds if i % 2 == 0 else cmds[::-1]):
        times[name].append(once(cmd))

print(f"| command ({rounds} interleaved rounds) | median | ratio to hello | paired difference to hello (median) |")
print("|---|---:|---:|---:|")
for name, _ in cmds:
    parts = name.split()
    base = "hello " + parts[1] if len(parts) > 1 else None
    med = statistics.median(times[name])
    if base in times and base != name:
        diff = statistics.median(a - b for a, b in zip(times[name], times[base]))
        print(f"| {name} | {med:.1f} ms | {med / statistics.median(times[base]):.2f}x | {diff:+.1f} ms |")
    else:
        print(f"| {name} | {med:.1f} ms | | |")
