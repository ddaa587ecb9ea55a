#!/usr/bin/env bash
# Chapter 06a (the partitioners): every output block and figure of chapters/06a-partitioners.md,
# into bench/results/06-partition/ (the folder chapter 06b shares). The example, the tests and the
# command-line blocks take seconds; the two benchmarks are long, each stated below: with
# REPRODUCE_SKIP_LONG=1 they are skipped (said so), and the chapter keeps quoting their committed
# files. bench/partition.sh's sweep writes chapter 06b's training block too, and bench/partition.gp
# draws both parts' result figures, so they run here, once.
# takes: about 3 min without the long steps; with them, bench partition ~15 min and bench/partition.sh
# 25 min to 2 h more (on 2 cores: bench partition took 876 s at a load of 20; bench/partition.sh,
# 260 validated runs with ranks oversubscribed, 24 min alone on the machine on 2026-11-29 and over an
# hour beside other jobs before)
set -uo pipefail
. "$(dirname "$0")/common.sh"
export TWOFOLD_DATASETS=datasets OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
r=bench/results/06-partition

# The eight-vertex example (every partitioner, and 06b's worked product), then the idea picture drawn
# from what it printed.
step $r/chapter_example.txt bash -c "CK_RUN_CASE=chapter_example build/verify/test_partition && \
CK_RUN_CASE=worked_exchange_product build/verify/test_partition_part"
step $r/idea-06a.txt python3 chapters/06a-partitioners-idea.py $r/chapter_example.txt chapters/06a-partitioners-idea.svg
# Every test line of the partitioners and the parts (the appendix links them).
step $r/test_partition.txt ctest --test-dir build -R "^test_partition$|test_partition_real_data|test_partition_part" -V
# twofold partition on a snapshot sequence and on an event stream.
step $r/partition_cli.txt bash -c 'for m in hash dynahb metis dgc; do echo "\$ build/twofold partition --data twitter_tennis --ranks 4 --method $m"; build/twofold partition --data twitter_tennis --ranks 4 --method $m; echo; done'

if [ "${REPRODUCE_SKIP_LONG:-0}" = 1 ]; then
    echo "   skipped (REPRODUCE_SKIP_LONG=1): bench partition (~15 min), bench/partition.sh (25 min to 2 h), the figures drawn from them"
else
    # Every partitioner at R = 2 to 64 on five graphs (metrics.txt, metrics.csv).
    step $r/metrics.txt build/bench/bench partition --out $r
    # 260 validated training runs and the imbalance claim (training.txt, training.csv, balance.csv).
    step $r/training.txt bench/partition.sh $r
    # The cut and balance figures (06a) and the bytes figure (06b), from the CSV files above.
    step $r/figures.txt gnuplot -e "dir='$r'" bench/partition.gp
fi
# Last, the chapter's run blocks, run again and compared line by line.
step $r/commands-06a.txt bash verify/chapter_commands.sh build chapters/06a-partitioners.md
finish
