#!/usr/bin/env bash
# opt on one rank, one thread, before issue 17 (9760dc6) and after, alternated in one run; median epoch of epochs 2..E.
cd "$(dirname "$0")/../../.."
before=${BEFORE:?set BEFORE to a twofold binary built from the commit to compare with (here 9760dc6)}
med() { awk '/^epoch/ { gsub(/[()]/, "", $(NF-1)); if ($2 > 1) print $(NF-1) }' | sort -n | awk '{ t[NR] = $1 } END { printf "%.3f", (NR % 2) ? t[(NR+1)/2] : (t[NR/2] + t[NR/2+1]) / 2 }'; }
echo "machine: $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')); before = $before, after = this commit; OMP_NUM_THREADS=1"
for case in "tgcn twitter_tennis 6" "gconvgru twitter_tennis 6" "gclstm england_covid 6" "tgcn powerlaw:nodes=20000,edges=1000000,snapshots=40 4"; do
  set -- $case
  s=(train --model $1 --data $2 --epochs $3 --hidden 32 --window 8 --batch 4 --impl opt)
  for round in 1 2 3; do
    [ "$1 $2" = "tgcn powerlaw:nodes=20000,edges=1000000,snapshots=40" ] && [ $round -gt 1 ] && break
    b=$(OMP_NUM_THREADS=1 "$before" "${s[@]}" | med)
    a=$(OMP_NUM_THREADS=1 build/twofold "${s[@]}" | med)
    echo "$1 $2 round $round: before $b s   after $a s   ratio $(awk -v b=$b -v a=$a 'BEGIN { printf "%.2f", b / a }')x"
  done
done
