#!/usr/bin/env bash
# Chapter 08's outputs. The GPU numbers need a GPU machine: where `nvidia-smi -L` lists one, this
# script first runs bench/gpu/run.sh (build, ctest -L cuda, four sanitizers, benchmark, race; at
# most 9 minutes; .gpu-debs/ and .whl/ from bench/gpu/prepare.sh must be there) into
# bench/results/08-gpu/gpu/ (summary.txt, logs.tar.gz). Without a GPU it records what is true
# here: the idea picture, the worked example on the CPU, and, in a build with CUDA (nvcc found at
# configure time), the cuda tests skipped (77), the benchmark's refusal and --device cuda running
# the CPU kernels. Through the device tool, whose machine sends back only what is under $OUT,
# everything goes to $OUT/bench/results/08-gpu/ instead: copy that folder into the checkout.
# Steps that need this checkout's build/ are left out where there is none (the GPU machine builds
# its own, in .gpu-build/).
# takes: under a minute without a GPU; about 9 minutes on the GPU machine (bench/gpu/run.sh)
set -uo pipefail
. "$(dirname "$0")/common.sh"
out=${OUT:+$OUT/}bench/results/08-gpu

# "$ COMMAND", its output, then its exit status: a skip (77) is the output here, not a failure.
with_status() {
    echo "\$ $*"
    "$@"
    echo "exit status $?"
}

if nvidia-smi -L > /dev/null 2>&1; then
    # The whole bring-up; its own summary names each step's result and time.
    step $out/gpu_run.txt env OUT=$out/gpu bench/gpu/run.sh
else
    echo "   no GPU here (nvidia-smi -L failed): bench/gpu/run.sh left out; on a GPU machine it writes $out/gpu/"
fi
step $out/figure.txt python3 chapters/08-gpu-idea.py
if [ ! -x build/verify/test_kernels ]; then
    echo "   no build/ here: the steps that run this checkout's build are left out"
    finish
    exit
fi
step $out/summation_order.txt env CK_RUN_CASE=by_hand build/verify/test_kernels
if [ ! -x build/verify/test_context_cuda ]; then
    echo "   this build has no CUDA tests (configured without nvcc, or -DTWOFOLD_CUDA=OFF): the CUDA steps are left out"
    finish
    exit
fi
step $out/ctest_cuda.txt ctest --test-dir build -L cuda
step $out/test_context_cuda.txt with_status build/verify/test_context_cuda
step $out/bench_propagate_cuda.txt with_status build/bench/bench_propagate_cuda
step $out/device_cuda.txt build/twofold train --model tgcn --data chickenpox --impl opt --device cuda --epochs 1
finish
