#!/usr/bin/env bash
# What reuse across gates is worth in time, integrated against stacked (chapter 02, "Reuse across
# gates and windows"): each model (the Chebyshev ones at K = 3) on twitter_tennis, `--profile`'s share of the epoch spent
# in sparse products (the graph convolutions' aggregations), one run per model. The counts of
# reuse_across_gates.txt say how many more sparse products per-gate convolutions would make; the
# share of the epoch they would add is (that factor - 1) x the sparse share, an estimate that holds
# while sparse products cost what they cost now (the same operator, the same widths).
# Run from anywhere: bash bench/results/02-incremental/reuse_across_gates_profile.sh > FILE
cd "$(dirname "$0")/../../.."
echo "# $(date -u '+%Y-%m-%d %H:%M') UTC; machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')), shared"
echo "# uptime: $(uptime)"
for model in gconvlstm tgcn gconvgru tgcn2 gcrnm1 wdgcn mpnnlstm; do
  k=(); case $model in gconvlstm|gconvgru|gcrnm1) k=(--k 3);; esac   # the others take no K
  args=(train --model $model --data twitter_tennis --epochs 3 --hidden 32 "${k[@]}" --window 8 --batch 4 --impl opt --profile)
  echo "\$ build/twofold ${args[*]}"
  build/twofold "${args[@]}" 2>&1 | grep -E "^model|^profile:|error|^  (family|dense|sparse|activations|copies|other) "
done
echo "# uptime at the end: $(uptime)"
