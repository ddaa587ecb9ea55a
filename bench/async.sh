#!/usr/bin/env bash
# Chapter 05a's straggler experiment: epoch time and loss against wall time of synchronous
# training, Sven's stale gradients (staleness 1) and DynaHB's model averaging (K = 1, 4, 16), on R
# MPI ranks, with no straggler, one persistent straggler (rank 1 sleeps MS ms in every step) and
# jitter spread over the ranks (each rank sleeps MS ms in a step with probability 0.25).
#
#   bench/async.sh [RANKS [EPOCHS [DATASET]]]          (default: 2 8 twitter_tennis)
#
# Validates first: `twofold verify async` on the same ranks and data must report #wrong 0 (the
# averaging twin bitwise against its serial simulation, the stale twin fp against its serial
# recurrence), or nothing is timed. MS is the synchronous run's median epoch time divided by its
# steps (the straggler is then about twice as slow as the others). T-GCN, hidden 16, windows of 4,
# R windows per step (one per rank), lr 0.01, train ratio 0.8. The epoch times include the
# evaluation of the test split, which is the same in every mode and has no straggler.
#
# What a straggler can and cannot show (chapters/05a-stale-updates.md): each rank's windows are fixed, so
# an epoch lasts at least the slowest rank's own compute plus its own delays, in every mode. One
# persistent straggler therefore costs every mode about S * MS per epoch (S steps); only the
# collectives skipped by averaging are saved. Jitter spread over the ranks costs synchronous
# training about S (1 - (1 - P)^R) MS (a step waits whenever any rank sleeps) and averaging once
# per epoch about S P MS plus the spread of the ranks' sums; the script prints both bounds beside
# the measurement.
#
# Output: CSV and a log in OUT (default bench/results/05-async): straggler.csv (mode, pattern,
# ranks, epoch, seconds, cumulative seconds, train loss, test MSE), straggler.txt (the table).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-2}
epochs=${2:-8}
data=${3:-twitter_tennis}
out=${OUT:-bench/results/05-async}
twofold=${TWOFOLD:-build/twofold}
cores=$(getconf _NPROCESSORS_ONLN) # before OMP_NUM_THREADS, which nproc would report instead
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpi=(mpiexec --oversubscribe -n "$ranks")
settings=(--model tgcn --data "$data" --epochs "$epochs" --hidden 16 --window 4 --batch "$ranks" --lr 0.01
          --train-ratio 0.8 --impl opt)
mkdir -p "$out"
log="$out/straggler.txt"
csv="$out/straggler.csv"

{
  echo "bench/async.sh $ranks $epochs $data ($(date -u +%Y-%m-%dT%H:%MZ); $cores cores:" \
       "$(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "note: the cores are shared with other jobs; with more ranks than idle cores a sleeping rank frees a core"
} | tee "$log"

# 1. validate
verdict=$("${mpi[@]}" "$twofold" verify async --data "$data")
if ! grep -q "#wrong 0" <<<"$verdict"; then
  printf '%s\nFAILED: the twins are not equal to their references; nothing timed\n' "$verdict" | tee -a "$log"
  exit 1
fi
grep -E "^  05|#wrong" <<<"$verdict" | tee -a "$log"

# epoch lines -> "epoch seconds train_loss test_mse"
epochs_of() { awk '/^epoch/ { gsub(/[()]/, "", $(NF-1)); print $2, $(NF-1), $5, $8 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() { # mode pattern options...: one run, its epochs appended to the CSV
  local mode=$1 pattern=$2; shift 2
  local output
  output=$("${mpi[@]}" "$twofold" train "${settings[@]}" "$@")
  epochs_of <<<"$output" | awk -v m="$mode" -v p="$pattern" -v r="$ranks" \
    '{ total += $2; printf "%s,%s,%s,%d,%.4f,%.4f,%s,%s\n", m, p, r, $1, $2, total, $3, $4 }' >> "$csv"
}

echo "mode,pattern,ranks,epoch,seconds,cumulative_seconds,train_loss,test_mse" > "$csv"

# 2. the step time without a straggler
run sync none
train=$("$twofold" train --model tgcn --data "$data" --epochs 0 --window 4 --train-ratio 0.8 | awk '/^train snapshots/ { split($3, a, "\\.\\."); print a[2] + 1 }')
windows=$(( (train + 3) / 4 ))
steps=$(( (windows + ranks - 1) / ranks ))
sync_epoch=$(awk -F, '$1 == "sync" && $2 == "none" && $4 > 1 { print $5 }' "$csv" | median)
ms=$(awk -v e="$sync_epoch" -v s="$steps" 'BEGIN { printf "%d", 1000 * e / s + 0.5 }')
echo "synchronous epoch without a straggler: ${sync_epoch} s for $steps steps: MS = $ms ms" | tee -a "$log"

modes=("sync" "stale-1" "average-1" "average-4" "average-16")
options_of() {
  case $1 in
    sync) echo "--staleness 0" ;;
    stale-1) echo "--staleness 1" ;;
    average-*) echo "--sync average --every ${1#average-}" ;;
  esac
}
for mode in "${modes[@]}"; do
  # shellcheck disable=SC2046
  if [[ $mode != sync ]]; then run "$mode" none $(options_of "$mode"); fi
  # shellcheck disable=SC2046
  run "$mode" "1:$ms" $(options_of "$mode") --straggler "1:$ms"
  # shellcheck disable=SC2046
  run "$mode" "each:$ms:0.25" $(options_of "$mode") --straggler "each:$ms:0.25"
done

# 3. the table: median epoch (epochs 2..E), ratio to synchronous under the same pattern, final losses
{
  echo
  printf '%-11s %-14s %10s %9s %10s %12s %12s\n' mode pattern "epoch s" "vs sync" "extra s" "final loss" "test MSE"
  for pattern in none "1:$ms" "each:$ms:0.25"; do
    base=$(awk -F, -v p="$pattern" '$1 == "sync" && $2 == p && $4 > 1 { print $5 }' "$csv" | median)
    for mode in "${modes[@]}"; do
      t=$(awk -F, -v m="$mode" -v p="$pattern" '$1 == m && $2 == p && $4 > 1 { print $5 }' "$csv" | median)
      none=$(awk -F, -v m="$mode" '$1 == m && $2 == "none" && $4 > 1 { print $5 }' "$csv" | median)
      last=$(awk -F, -v m="$mode" -v p="$pattern" '$1 == m && $2 == p { l = $7; q = $8 } END { print l, q }' "$csv")
      awk -v m="$mode" -v p="$pattern" -v t="$t" -v b="$base" -v n="$none" -v l="$last" 'BEGIN {
            split(l, f, " "); printf "%-11s %-14s %10.3f %8.2fx %10.3f %12.6f %12.6f\n", m, p, t, b / t, t - n, f[1], f[2] }'
    done
  done
  awk -v s="$steps" -v ms="$ms" -v r="$ranks" 'BEGIN {
        printf "\nbounds per epoch (S = %d steps, MS = %d ms, R = %d): persistent straggler, every mode >= S MS = %.3f s extra;\n", s, ms, r, s * ms / 1000
        printf "jitter P = 0.25: synchronous ~ S (1 - 0.75^R) MS = %.3f s extra, averaging once per epoch ~ S P MS = %.3f s (+ spread)\n",
               s * (1 - 0.75 ^ r) * ms / 1000, s * 0.25 * ms / 1000 }'
} | tee -a "$log"
echo "CSV: $csv"
