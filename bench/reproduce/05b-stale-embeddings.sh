#!/usr/bin/env bash
# Chapter 05b (DGC's stale embeddings): every output block and figure of
# chapters/05b-stale-embeddings.md, into bench/results/05-async/ (the folder both parts of chapter 05
# share): the idea picture, the unit test (shared with 05a: each part regenerates what it quotes) and
# the MPI test, DySAT's rows, DGC's simulated and MPI sweeps, the figures drawn from their CSV files,
# and last the chapter's run blocks. Bytes do not depend on the machine; times do (each file's header
# names the machine and its load). With REPRODUCE_SKIP_LONG=1 the two sweeps and their figures are
# skipped, said so, and the chapter keeps quoting their committed files.
# takes: about 30 min on 2 quiet cores, over an hour on busy ones; REPRODUCE_SKIP_LONG=1: 21 min at load 40-75
# (output.txt 18 min and dgc_mpi.txt 3 min at load 2.5-9 on 2026-11-29, dysat_stale.txt ~3 min; the chapter's run
# blocks 3 min at load 7; the rest under 2 min each)
set -uo pipefail
. "$(dirname "$0")/common.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 # as ctest runs the MPI tests
r=bench/results/05-async
step $r/idea_05b.txt python3 chapters/05b-stale-embeddings-idea.py chapters/05b-stale-embeddings-idea.svg
step $r/test_async.txt build/verify/test_async
step $r/test_async_embeddings_mpi.txt mpiexec -n 4 --oversubscribe build/verify/test_async_embeddings_mpi
step $r/dysat_stale.txt build/bench/bench async_dysat
if [ "${REPRODUCE_SKIP_LONG:-0}" = 1 ]; then
    echo "   skipped (REPRODUCE_SKIP_LONG=1): DGC's simulated sweep (bench async), its MPI rows and their figures (about 20 min quiet, hours under load)"
else
    step $r/output.txt build/bench/bench async --out $r
    step $r/dgc_mpi.txt bench/async_dgc_mpi.sh 20 2 4
    step $r/figures_05b.txt gnuplot -e "dir='$r'" bench/async_dgc.gp
fi
step $r/commands_05b.txt bash verify/chapter_commands.sh build chapters/05b-stale-embeddings.md
finish
