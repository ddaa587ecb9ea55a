#!/usr/bin/env bash
# 1 rank x 1 thread, 1 rank x 2 threads (passive and spinning waits), 2 ranks x 1 thread: T-GCN and
# GConvGRU on twitter_tennis, 6 epochs each, three interleaved rounds; each line is the median of epochs 2..6.
cd "$(dirname "$0")/../../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
med() { awk '/^epoch/ { gsub(/[()]/, "", $(NF-1)); if ($2 > 1) print $(NF-1) }' | sort -n | awk '{ t[NR] = $1 } END { printf "%.3f", (NR % 2) ? t[(NR+1)/2] : (t[NR/2] + t[NR/2+1]) / 2 }'; }
echo "machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')); median epoch seconds of epochs 2..6"
for model in tgcn gconvgru; do
  s=(train --model $model --data twitter_tennis --epochs 6 --hidden 32 --window 8 --batch 4 --impl opt)
  for round in 1 2 3; do
    a=$(OMP_NUM_THREADS=1 build/twofold "${s[@]}" | med)
    b=$(OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive build/twofold "${s[@]}" | med)
    c=$(OMP_NUM_THREADS=2 OMP_WAIT_POLICY=active build/twofold "${s[@]}" | med)
    d=$(OMP_NUM_THREADS=1 mpiexec -n 2 build/twofold "${s[@]}" | med)
    echo "$model round $round: 1x1 $a s   1x2 passive $b s   1x2 active $c s   2x1 $d s"
  done
done
