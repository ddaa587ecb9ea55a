#!/usr/bin/env bash
# Chapter 02 (ReInc): every output block and figure of chapters/02-incremental.md, into
# bench/results/02-incremental/. The tests and the mini-batch matrix take minutes; the three
# benchmarks are long, each stated below: with REPRODUCE_SKIP_LONG=1 they are skipped (said so),
# and the chapter keeps quoting their committed files.
# takes: about 25 min under nice -n 15 at a load of 20-23 on 2 cores without the long steps
# (test_incremental 2 min, test_incremental_train 3 min, its 4 ranks 3 min, the mini-batch matrix on
# twitter_tennis 9.5 min, the profile 4 min, the demo half a minute). The long steps: `bench
# incremental` about 10 min on a quiet machine (its training epochs alone add up to 7.6 min in
# output_after_faster_kernels.txt), hours under load; `bench minibatch --quick` 8 min at a load of
# 11-14; the full-size mini-batch run 35 min with a core to itself (2026-11-29, the other core
# busy at nice 15; at a load of 9.5 it took about an hour). T-GCN's two runs at that size compared
# step by step (minibatch_drift.txt) take 75 s on the quiet machine (12 min at nice 15 under a load of 6-9).
set -uo pipefail
. "$(dirname "$0")/common.sh"
out=bench/results/02-incremental

# The idea picture: G- and G+ on four vertices, computed by the script that draws it.
step $out/figure_idea.txt python3 chapters/02-incremental-idea.py

# The worked example, the chains, training on served inputs, ranks (section "Results: equal").
# The test programs run directly (not through ctest -V, which prefixes every line), as ctest would.
export TWOFOLD_DATASETS=datasets OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
step $out/test_incremental.txt build/verify/test_incremental
step $out/test_incremental_train.txt build/verify/test_incremental_train
step $out/test_incremental_mpi.txt mpiexec -n 4 --oversubscribe build/verify/test_incremental_mpi
step $out/reuse_across_gates.txt env CK_RUN_CASE=reuse_across_gates_counted build/verify/test_incremental_train
step $out/papers_models_generated.txt env CK_RUN_CASE=papers_models_generated build/verify/test_incremental_train
# Sampled mini-batches: the rule by hand, the oracle, 1 to 4 ranks, resume; the matrix's column.
step $out/test_minibatch.txt build/verify/test_minibatch
step $out/test_minibatch_mpi.txt mpiexec -n 4 --oversubscribe build/verify/test_minibatch_mpi
step $out/verify_minibatch.txt build/twofold verify minibatch --data twitter_tennis
# What parts T-GCN's served and recompute runs at the full size (chapter 02, "The full size").
step $out/minibatch_drift.txt nice -n 15 build/bench/bench_minibatch_drift
step $out/verify_minibatch_ranks.txt mpiexec -n 3 --oversubscribe build/twofold verify minibatch --data powerlaw:nodes=60,edges=300,snapshots=10,churn=0.1,features=3,seed=4
# What reuse across gates is worth in time: each model's share of an epoch in sparse products.
step $out/reuse_across_gates_profile.txt bash $out/reuse_across_gates_profile.sh
# The demo's rows of this chapter (validated, then timed).
step $out/demo.txt build/twofold demo incremental

if [ "${REPRODUCE_SKIP_LONG:-0}" = 1 ]; then
    echo "   skipped (REPRODUCE_SKIP_LONG=1): bench incremental (~10 min quiet), bench minibatch --quick (~8 min), full-size minibatch (~2.5 h under load)"
else
    # Time against churn, the cache's hit rate, whole epochs; then the two plots from its CSV files.
    step $out/output.txt build/bench/bench incremental --out $out
    step $out/figure_churn_cache.txt gnuplot -e "dir='$out'; out='chapters'" bench/incremental.gp
    step $out/minibatch.txt build/bench/bench minibatch --quick --out $out
    step $out/minibatch_full.txt nice -n 15 build/bench/bench minibatch --out $out/full
fi
finish
