#!/usr/bin/env bash
# Chapter 04's measurements for APAN: build/bench/bench dispatch_apan on R = 1 (the redundancy sweep,
# apan_eta.csv) and R = 2 .. 64 MPI ranks (bytes per training epoch, apan_bytes.csv; --quick:
# Wikipedia only, whose byte counts do not depend on --quick), oversubscribed on this machine's cores
# (bytes are counted, so they do not depend on speed); then DepCache's replica against a
# --memory-limit that Sven's dispatch fits in (apan_memory_limit.txt). The console output is tee'd to
# apan_output.txt with the machine on top.
#
#   bench/dispatch_apan.sh   (RANKS="1 2 4" for fewer rank counts, OUT=DIR elsewhere, BENCH=PATH another binary)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results/04-dispatch}
ranks=${RANKS:-"1 2 4 8 16 32 64"}
bench=${BENCH:-build/bench/bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$out"
rm -f "$out/apan_eta.csv" "$out/apan_bytes.csv"
{
  echo "# bench/dispatch_apan.sh on $(date -u '+%Y-%m-%d %H:%M UTC'): $(lscpu | sed -n 's/^Model name: *//p'), $(lscpu | sed -n "s/^CPU(s): *//p") cores"
  echo "# commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/results' || echo ' with uncommitted changes')"
  echo "# (the machine was shared with other jobs: times are indicative, bytes exact)"
  for r in $ranks; do
    quick=$([ "$r" -gt 1 ] && echo " --quick" || true)
    echo
    echo "# $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "\$ mpiexec -n $r --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 build/bench/bench dispatch_apan$quick --out $out"
    mpiexec -n "$r" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 "$bench" dispatch_apan $quick --out "$out"
  done
} 2>&1 | tee "$out/apan_output.txt"
