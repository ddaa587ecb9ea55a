#!/usr/bin/env bash
# Chapter 04's measurements: build/bench/bench dispatch on R = 1, 2, 4, 8, 16, 32 and 64 MPI ranks,
# oversubscribed on this machine's cores (bytes are counted, so they do not depend on speed;
# times at R > 2 are not reported), appending to eta.csv (R = 1), bytes.csv (R > 1) and epoch.csv
# (R = 1, 2) in the output directory, the console output tee'd to output.txt with the machine on
# top; then the figures (bench/dispatch.gp). With MODEL=apan: bench dispatch_apan, APAN's sweeps
# (apan_eta.csv, apan_bytes.csv, apan_output.txt; no epoch times, no figures).
#
#   bench/dispatch.sh        (RANKS="1 2 4" for fewer rank counts, OUT=DIR elsewhere, BENCH=PATH another binary)
#   MODEL=apan bench/dispatch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/results/04-dispatch}
ranks=${RANKS:-"1 2 4 8 16 32 64"}
bench=${BENCH:-build/bench/bench}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
name=dispatch prefix=
[ "${MODEL:-}" = apan ] && name=dispatch_apan prefix=apan_
mkdir -p "$out"
rm -f "$out/${prefix}eta.csv" "$out/${prefix}bytes.csv" "$out/${prefix}epoch.csv"
{
  echo "# ${MODEL:+MODEL=$MODEL }bench/dispatch.sh on $(date -u '+%Y-%m-%d %H:%M UTC'): $(lscpu | sed -n 's/^Model name: *//p'), $(lscpu | sed -n "s/^CPU(s): *//p") cores"
  echo "# commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!bench/results' || echo ' with uncommitted changes')"
  echo "# (the machine was shared with other jobs: times are indicative, bytes exact)"
  for r in $ranks; do
    echo
    echo "# $(date -u '+%H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "\$ mpiexec -n $r --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 build/bench/bench $name --out $out"
    mpiexec -n "$r" --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 "$bench" $name --out "$out"
  done
} 2>&1 | tee "$out/${prefix}output.txt"
[ -n "$prefix" ] || gnuplot -e "dir='$out'" bench/dispatch.gp
