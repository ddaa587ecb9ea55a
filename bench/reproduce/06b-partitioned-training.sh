#!/usr/bin/env bash
# Chapter 06b (partitioned training): every output block and figure of
# chapters/06b-partitioned-training.md, into bench/results/06-partition/ (shared with 06a). Its
# training block (training.txt) and its bytes figure come from chapter 06a's long steps
# (bench/partition.sh and bench/partition.gp draw both parts' results): `bench/reproduce.sh 06` runs both.
# takes: about 15 min on 2 shared cores (test_partition_mpi.txt, 1 to 4 ranks: 524 s at a load of 25;
# verify.txt, every model the split trains on chickenpox: a few minutes; parting.txt a minute)
set -uo pipefail
. "$(dirname "$0")/common.sh"
export TWOFOLD_DATASETS=datasets OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
r=bench/results/06-partition

# The idea picture, drawn from chapter_example.txt: 06a's first step writes it (the example's owners
# and this chapter's worked product); the product's run block is checked by the last step here.
step $r/idea-06b.txt python3 chapters/06b-partitioned-training-idea.py $r/chapter_example.txt \
    chapters/06b-partitioned-training-idea.svg
# Partition invariance on 1 to 4 ranks, every case (the appendix quotes it).
step $r/test_partition_mpi.txt ctest --test-dir build -R test_partition_mpi -V
# The technique table's rows and its model matrix on 4 ranks (chickenpox: on twitter_tennis the
# matrix of every model takes over 20 minutes on 2 shared cores).
step $r/verify.txt mpiexec -n 4 --oversubscribe build/twofold verify partition --data chickenpox
# Spatial and temporal bytes of PSS, PTS and DGC's chunks for T-GCN and DySAT (counts, no timing).
step $r/traffic.txt build/bench/bench partition_traffic --out $r
# Where bench/partition.sh's two WRONG rows (T-GCN, los, pts at R = 2) part from the reference, and
# that the split's arithmetic is not the cause (a minute).
step $r/parting.txt env OMP_NUM_THREADS=1 mpiexec -n 2 --oversubscribe build/bench/bench_partition_parting tgcn los pts exchange 2
# Last, the chapter's run blocks, run again and compared line by line.
step $r/commands-06b.txt bash verify/chapter_commands.sh build chapters/06b-partitioned-training.md
finish
