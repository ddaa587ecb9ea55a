#!/usr/bin/env bash
# Chapter 04's output blocks and figures, quick steps first: the idea picture, the checks the
# chapter quotes (test_dispatch, test_dispatch_mpi on 4 and 3 ranks, twofold verify dispatch), the
# run blocks, DepCache's replica against --memory-limit, then the two sweeps of bench/dispatch.sh:
# APAN's (Wikipedia's first 20,000 events, R = 1 to 64) and TGN's and JODIE's (the redundancy on
# four streams, bytes of a Wikipedia epoch at R = 2 to 64, epoch times on 1 and 2 ranks), which also
# redraws 04-dispatch-eta.svg and 04-dispatch-bytes.svg (bench/dispatch.gp).
# takes: about 1.5 hours; the last step (TGN/JODIE sweep) about 1 hour of it (58 min on 2026-11-29, load 1.5 to 70)
# Measured at nice 15 on 2 cores under a load of 20: the checks 22 min (test_dispatch 4 min,
# test_dispatch_mpi on 4 and 3 ranks 8 min each), the Wikipedia redundancy 8 s, APAN's sweep 7 min;
# the TGN/JODIE sweep took about 1 h 45 min at normal priority (R = 1 with the epoch times about 45 min,
# R = 2 to 64 about 1 hour, from output.txt's own clock lines).
set -uo pipefail
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
out=bench/results/04-dispatch
step $out/idea.txt python3 chapters/04-dispatch-idea.py chapters/04-dispatch-idea.svg
step $out/test_dispatch.txt build/verify/test_dispatch
step $out/verify.txt mpiexec -n 4 --oversubscribe build/verify/test_dispatch_mpi
step $out/verify_apan.txt mpiexec -n 3 --oversubscribe build/verify/test_dispatch_mpi
step $out/verify_models.txt mpiexec -n 2 --oversubscribe build/twofold verify dispatch --data wikipedia
step $out/commands.txt bash verify/chapter_commands.sh build chapters/04-dispatch.md
# DepCache keeps a full replica and stops at set-up (exit status 2, its one line kept); the
# partitioned modes train under the same limit.
step $out/apan_memory_limit.txt bash -c 'for mode in depcache sven naive depcomm; do
    set -- mpiexec -n 4 --oversubscribe build/twofold --memory-limit 800M train --model apan \
        --data events:nodes=100000,events=4000,seed=3 --impl opt --dispatch $mode --epochs 1
    echo "\$ $*"; "$@"; echo "exit status $?"; done'
# The redundancy on Wikipedia alone (plans only, a minute): --quick leaves out the other streams and
# the epoch times; its CSV goes to quick/ so that the full sweep's eta.csv stays whole.
rm -f $out/quick/eta.csv  # the bench appends
step $out/eta_wikipedia.txt build/bench/bench dispatch --quick --out $out/quick
step $out/apan_output.txt env MODEL=apan bash bench/dispatch.sh
# The byte sweep at R = 2 alone (Wikipedia, no epoch times; about 5 min): how far the full sweep's
# bytes.csv, measured before the seeders merged, is from today's counts (bench/results/04-dispatch/notes.md).
rm -f $out/quick/bytes.csv
step $out/quick/bytes_r2.txt mpiexec -n 2 --oversubscribe --bind-to none --mca mpi_yield_when_idle 1 \
    build/bench/bench dispatch --quick --out $out/quick
step $out/output.txt bash bench/dispatch.sh
finish
