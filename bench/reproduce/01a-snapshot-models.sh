#!/usr/bin/env bash
# Chapter 01a (snapshot models): every output block and figure, into bench/results/01-models/.
# takes: ~10 min with REPRODUCE_SKIP_LONG=1 (the untimed steps); about an hour in all on a quiet 2-core machine
# The untimed steps: the tests' outputs, the link and classify tasks, PyG-T's example with its peer
# (under a load of 20 the example alone took ~20 min). The long ones (estimates from the epoch times
# the chapter quotes): bench/train.sh's four peer races (the 10^6-edge one ~10 min), every model
# raced on chickenpox, the threads rounds, the profile, and `twofold verify` on pedalme and on
# twitter_tennis (the latter 34 min under load). The races need the peer's Python:
# PYTHON=/path/to/python (bench/peer/README.md).
set -uo pipefail
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM-1}
out=bench/results/01-models

# The figures: each drawn by the script beside it (its log beside the other results).
step $out/figure_idea_01a.txt python3 chapters/01a-snapshot-models-idea.py
step $out/figure_shapes.txt gnuplot chapters/01-models-shapes.gp

# Untimed: the tests' outputs the chapter quotes, the tasks, the published example.
step $out/commands_01a.txt bash verify/chapter_commands.sh build chapters/01a-snapshot-models.md
step $out/test_gradcheck.txt build/verify/test_gradcheck
step $out/test_models_peer.txt build/verify/test_models_peer
step $out/test_kernels.txt build/verify/test_kernels
step $out/test_train_mpi.txt mpiexec -n 3 --oversubscribe build/verify/test_train_mpi
step $out/link_task.txt build/twofold train --model gatlstm --data twitter_tennis --task link --hidden 16 --window 8 --epochs 5 --impl opt
step $out/link_task_dysat.txt $out/link_task_dysat.sh
step $out/classify_task.txt $out/classify_task.sh
step $out/tgcn_example.txt $out/tgcn_example.sh
# The optimized kernels' distance from the reference's per Adam step, with the race's settings, and
# the hidden states that cross the ReLU (notes.md; drift_dcrnn_4d1ba26.txt is the race's own commit).
step $out/drift_dcrnn.txt build/bench/bench_drift dcrnn chickenpox 4 32
step $out/drift_models.txt bash -c 'for m in tgcn gconvgru gclstm; do build/bench/bench_drift $m chickenpox 4 32 || exit 1; done'

if [ "${REPRODUCE_SKIP_LONG:-0}" != 1 ]; then
    # Timed: read them on a quiet machine (each file's header names the load).
    step $out/profile.txt build/twofold train --model tgcn --data twitter_tennis --epochs 3 --hidden 32 --window 8 --batch 4 --impl opt --profile
    step $out/threads.txt $out/threads.sh
    step $out/train_race.txt bash -c 'for run in "tgcn twitter_tennis 6" "gconvgru twitter_tennis 6" "gclstm england_covid 6" "tgcn powerlaw:nodes=20000,edges=1000000,snapshots=40 4"; do echo "\$ bench/train.sh $run"; bench/train.sh $run || exit 1; echo; done'
    step $out/models_race.txt $out/models_race.sh
    # Long: the model x technique matrix.
    step $out/verify_matrix.txt build/twofold verify --data pedalme
    step $out/verify_matrix_twitter_tennis.txt build/twofold verify --data datasets/twitter_tennis_rg17.json.gz
fi
finish
