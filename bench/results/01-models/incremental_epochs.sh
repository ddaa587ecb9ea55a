#!/usr/bin/env bash
# Incremental inputs in training: recompute vs --incremental, opt, 1 rank, one thread, overlapping windows.
cd "$(dirname "$0")/../../.."
g=powerlaw:nodes=20000,edges=200000,snapshots=40,churn=0.01,degrees=0
echo "machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p'))"
for model in tgcn gconvgru; do
  for inc in "" --incremental; do
    echo "\$ build/twofold train --model $model --data $g --epochs 3 --hidden 16 --window 8 --stride 2 --impl opt $inc"
    OMP_NUM_THREADS=1 build/twofold train --model $model --data $g --epochs 3 --hidden 16 --window 8 --stride 2 --impl opt $inc | grep -E "^epoch|^final|incremental|served"
  done
done
