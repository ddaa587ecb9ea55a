#!/usr/bin/env bash
# Measured imbalance of DyGNeX schedules (chapter 07): for each dataset and rank count, every
# method's schedule is trained on the ranks (twofold schedule --run) and the ranks' busy time
# (thread CPU time of their windows, median over the epochs per window) is compared with the
# cost model's prediction. Each configuration runs REPEATS times (default 2), so the table
# shows the spread of the measurement beside the difference between methods.
#
#   bench/schedule.sh [OUT_DIR [REPEATS]]     (default: bench_out 2)
#
# Settings: GConvGRU hidden 16 (its graph convolution runs in every gate, so the edges carry
# most of the cost), windows of 4, stride 1, 5 epochs, ILP 10 s / 2 %. Output: the full runs in
# OUT_DIR/schedule_runs.txt, one CSV line per (data, ranks, method, repeat) in
# OUT_DIR/imbalance.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench_out}
repeats=${2:-2}
twofold=${TWOFOLD:-build/twofold}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$out"
runs="$out/schedule_runs.txt"
csv="$out/imbalance.csv"
: > "$runs"
echo "data,ranks,repeat,method,predicted_imbalance,measured_imbalance,predicted_efficiency,measured_efficiency" > "$csv"
datasets=(twitter_tennis england_covid "powerlaw:nodes=2000,edges=20000,snapshots=64,growth=8")
for data in "${datasets[@]}"; do
  for ranks in 2 3 4; do
    for repeat in $(seq 1 "$repeats"); do
      output=$(mpiexec --oversubscribe -n "$ranks" "$twofold" schedule --data "$data" --ranks "$ranks" --run \
               --epochs 5 --model gconvgru --hidden 16 --window 4 --stride 1 --ilp-seconds 10)
      printf '### %s, %s ranks, repeat %s\n%s\n\n' "$data" "$ranks" "$repeat" "$output" >> "$runs"
      # a method's row (predicted imbalance in field 7, efficiency in 8) and its "measured" line
      label=${data//,/;}   # the CSV's data column without commas
      awk -v data="$label" -v ranks="$ranks" -v repeat="$repeat" '
        $1 ~ /^(roundrobin|lpt|greedy|ilp)$/ && NF >= 9 { method = $1; predicted = $7; efficiency = $8 }
        $1 == "measured" { gsub(/,/, "", $4); gsub(/,/, "", $14);
                           printf "%s,%s,%s,%s,%s,%s,%s,%s\n", data, ranks, repeat, method, predicted, $4,
                                  efficiency, $14 }' <<<"$output" >> "$csv"
      echo "done: $data on $ranks ranks, repeat $repeat" >&2
    done
  done
done
awk -F, -f bench/schedule_summary.awk "$csv" | tee "$out/imbalance_summary.txt"
echo "wrote $runs, $csv and $out/imbalance_summary.txt"
