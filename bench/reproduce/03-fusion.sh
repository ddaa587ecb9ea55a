#!/usr/bin/env bash
# Chapter 03 (DGC's fusion): every output block and figure of chapters/03-fusion.md, into
# bench/results/03-fusion/. With REPRODUCE_SKIP_LONG=1 the benchmark (and the figure drawn from its
# CSV) is skipped, said so, and the chapter keeps quoting its committed file.
# takes: about 5 min on a quiet 2-core machine without the benchmark; `bench fusion` about 10 min more
set -uo pipefail
. "$(dirname "$0")/common.sh"
out=bench/results/03-fusion

figure() {
    printf '   %-58s ' "$1"
    if "${@:2}"; then echo ok; else echo FAILED; failed_steps+=("$1"); fi
}
# The idea picture: A1..A4 beside B1 B2 C1 C2, the plans computed by the script that draws them.
figure chapters/03-fusion-idea.svg python3 chapters/03-fusion-idea.py

# The worked example, the mask rules, NaN isolation, real lifetimes, spatial loads, attention.
# The test program runs directly (ctest -V prefixes every line), both suites, as ctest would.
export TWOFOLD_DATASETS=datasets OMP_WAIT_POLICY=passive
step $out/test_fusion.txt build/verify/test_fusion
# The matrix's column on the models' own recurrences.
step $out/verify_fusion_temporal.txt build/twofold verify fusion_temporal --data datasets/twitter_tennis_rg17.json.gz
# The demo's rows of this chapter (validated, then timed).
step $out/demo.txt build/twofold demo fusion

if [ "${REPRODUCE_SKIP_LONG:-0}" = 1 ]; then
    echo "   skipped (REPRODUCE_SKIP_LONG=1): bench fusion and its figure (~10 min)"
else
    step $out/output.txt build/bench/bench fusion --out $out
    figure chapters/03-fusion.svg gnuplot -e "dir='$out'; out='chapters/03-fusion.svg'" bench/fusion.gp
fi
finish
