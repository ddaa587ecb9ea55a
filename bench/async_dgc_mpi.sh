#!/usr/bin/env bash
# Chapter 05b's DGC rows measured over MPI: DGC's stale embeddings on chapter 06's exchange mode
# (opt/async_embeddings.h) on R ranks, beside the serial simulation's rows of the same settings in
# output.txt (build/bench/bench async): GConvGRU, hidden 16, Chebyshev K = 2, windows of 8, one
# window per step, vertex v on rank v mod R (--partition hash), twitter_tennis.
#
#   bench/async_dgc_mpi.sh [EPOCHS [RANKS...]]          (default: 20 2 4)
#
# Validates first: test_async_embeddings_mpi on the same rank counts must pass (theta = 0 bitwise the
# exchange mode, caches identical, the simulation's decisions), or nothing is run. Bytes do not
# depend on timing; the times are the machine's of the moment (shared cores).
#
# Output: OUT/dgc_mpi.txt (default OUT = bench/results/05-async): per (R, schedule) the training
# forwards' bytes sent against the exchange mode's, the saving split into exact and stale reuse,
# the whole exchange's bytes (forward, backward, evaluation, message sizes), the final test MSE.
set -euo pipefail
cd "$(dirname "$0")/.."
epochs=${1:-20}
shift || true
ranks_list=("${@:-2 4}")
read -r -a ranks_list <<<"${ranks_list[*]}"
out=${OUT:-bench/results/05-async}
twofold=${TWOFOLD:-build/twofold}
test_binary=${TEST:-build/verify/test_async_embeddings_mpi}
cores=$(getconf _NPROCESSORS_ONLN)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
settings=(--model gconvgru --data twitter_tennis --epochs "$epochs" --hidden 16 --window 8 --batch 1 --impl opt
          --split vertex --partition hash)
mkdir -p "$out"
log="$out/dgc_mpi.txt"
{
  echo "bench/async_dgc_mpi.sh $epochs ${ranks_list[*]} ($(date -u +%Y-%m-%dT%H:%MZ); $cores cores:" \
       "$(lscpu | sed -n 's/^Model name: *//p'); load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "settings: twofold train ${settings[*]} --stale-embeddings S"
} | tee "$log"
for ranks in "${ranks_list[@]}"; do
  if ! mpiexec --oversubscribe -n "$ranks" "$test_binary" > /dev/null 2>&1; then
    echo "FAILED: test_async_embeddings_mpi on $ranks rank(s); nothing run" | tee -a "$log"
    exit 1
  fi
  echo "validated: test_async_embeddings_mpi passes on $ranks rank(s)" | tee -a "$log"
done
printf '%3s %-17s %12s %12s %7s %7s %7s %14s %10s %9s\n' R schedule fwd_sent fwd_plain saved% exact% stale% \
  exchange_total test_MSE seconds | tee -a "$log"
for ranks in "${ranks_list[@]}"; do
  for schedule in off zero static:0.5 static:0.7 adaptive adaptive-printed; do
    output=$(mpiexec --oversubscribe -n "$ranks" "$twofold" train "${settings[@]}" --stale-embeddings "$schedule")
    awk -v r="$ranks" -v s="$schedule" '
      /^final test MSE/ { mse = $4; seconds = $(NF - 1); gsub(/[(]/, "", seconds) }
      /^communication:/ { total = $3 }
      /^stale embeddings/ { sent = $7; plain = $12; exact = $18 + 0; stale = $21 + 0 }
      END { printf "%3d %-17s %12d %12d %7.2f %7.2f %7.2f %14d %10s %9s\n", r, s, sent, plain,
            plain ? 100 * (1 - sent / plain) : 0, plain ? 100 * exact / plain : 0, plain ? 100 * stale / plain : 0,
            total, mse, seconds }' <<<"$output" | tee -a "$log"
  done
done
