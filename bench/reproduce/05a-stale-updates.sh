#!/usr/bin/env bash
# Chapter 05a (DynaHB's averaging, Sven's stale gradients and pipeline): every output block and figure
# of chapters/05a-stale-updates.md, into bench/results/05-async/ (the folder both parts of chapter 05
# share): the idea picture, the three tests' outputs, the technique table's rows, the event trainer's
# pipeline (TGN, then APAN's micro-batch sweep with both kernels), the straggler experiment and its
# figure, and last the chapter's run blocks. The event-model steps come first: their numbers depend on
# the negatives' seeder. Times depend on the machine and its load (each file's header names both);
# bytes, errors and metrics do not. With REPRODUCE_SKIP_LONG=1 the timed benchmarks (pipeline,
# APAN sweeps, straggler and its figure) and the all-reduce orders are skipped, said so, and the
# chapter keeps quoting their committed files.
# takes: about 80 min on 2 quiet cores, over 2 h at load 20; REPRODUCE_SKIP_LONG=1: 25 min at load 10-17
# (measured: test_async_mpi.txt 2 min and pipeline.txt 30 min at load 20-28; at low load
# pipeline_apan.txt ~10 min, straggler.txt ~5 min; verify.txt 20 min at load 10-17; allreduce_orders.txt
# 23 min at load 1-3; the rest under 3 min each)
set -uo pipefail
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 # as ctest runs the MPI tests
r=bench/results/05-async
events=events:nodes=2000,events=10000,repeat=0.5,features=4,seed=5
step $r/idea_05a.txt python3 chapters/05a-stale-updates-idea.py chapters/05a-stale-updates-idea.svg
step $r/test_async.txt build/verify/test_async
step $r/test_async_mpi.txt mpiexec -n 4 --oversubscribe build/verify/test_async_mpi
step $r/test_async_mpi_1.txt mpiexec -n 1 build/verify/test_async_mpi
step $r/test_async_pipeline_mpi.txt mpiexec -n 4 --oversubscribe build/verify/test_async_pipeline_mpi
step $r/verify.txt mpiexec -n 3 --oversubscribe build/twofold verify async --data twitter_tennis
if [ "${REPRODUCE_SKIP_LONG:-0}" = 1 ]; then
    echo "   skipped (REPRODUCE_SKIP_LONG=1): the pipeline timings (TGN, APAN with both kernels), the straggler run with its figure and the all-reduce orders (about 75 min quiet, hours under load)"
else
    step $r/pipeline.txt bench/async_pipeline.sh "2 4" 3 $events
    step $r/pipeline_apan.txt bench/async_pipeline.sh 2 1 $events apan "200 600 1000 2000"
    step $r/pipeline_apan_opt_kernels.txt bench/async_pipeline.sh 2 3 $events apan "200 600 1000 2000" opt
    step $r/straggler.txt bench/async.sh 2 16
    step $r/figures_05a.txt gnuplot -e "dir='$r'" bench/async.gp
    step $r/allreduce_orders.txt verify/allreduce_orders.sh build
fi
step $r/commands_05a.txt bash verify/chapter_commands.sh build chapters/05a-stale-updates.md
finish
