#!/usr/bin/env bash
# Event-model training that overflows stops at the first non-finite step (verify/ERRORS.md,
# Non-finite training). Edge features of +-3e38 (valid float32, near FLT_MAX) overflow the gradients
# of TGN's memory updater (JODIE's tanh RNN saturates on them and stays finite: nothing to stop);
# the reference, the distributed twin (2 ranks) and its pipeline must each stop with exit status 2
# and one line naming the epoch and step, and leave the checkpoint already in --save as it was (they
# once trained on and saved parameters their own --load refused). Prints each run's line.
# Usage: test_events_diverge.sh TWOFOLD MPIEXEC
set -u
twofold=$(realpath "$1") mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
events=400 columns=4
# An .npy of float32 [events][columns]: the v1.0 header padded to 64 bytes, then +-3e38
# alternating by column (little-endian e6b1617f = 3e38, e6b161ff = -3e38).
header="{'descr': '<f4', 'fortran_order': False, 'shape': ($events, $columns), }"
while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
{
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $(( (${#header} + 1) % 256 )))\\x$(printf %02x $(( (${#header} + 1) / 256 )))"
    printf '%s\n' "$header"
    for _ in $(seq $((events * columns / 2))); do printf '\xe6\xb1\x61\x7f\xe6\xb1\x61\xff'; done
} > "$work/huge.npy"
failures=0

# check NAME -- COMMAND...: exit 2, one error line naming the epoch and step, the checkpoint unchanged.
check() {
    local name=$1
    shift 2
    "$@" > "$work/out" 2> "$work/err"
    local status=$? errors=$(grep -c 'twofold: error' "$work/err") line=$(grep -m1 'twofold: error' "$work/err")
    local after=$(cat "$work/kept/"*.npy | cksum)
    printf '%-22s exit %d, %d error line(s): %s\n' "$name" "$status" "$errors" "$line"
    if [ "$status" -ne 2 ] || [ "$errors" -ne 1 ] || ! grep -q 'epoch 1, step [0-9]* (training events' "$work/err" ||
        ! grep -q 'training diverged' "$work/err" || [ "$after" != "$before" ] || grep -q '^saved' "$work/out"; then
        echo "FAILED: expected exit 2, one 'epoch 1, step S ...: training diverged' line, the checkpoint kept:"
        cat "$work/out" "$work/err"
        failures=$((failures + 1))
    fi
}

for model in tgn; do
    args=(train --model "$model" --data events:nodes=40,events=$events --memory-dim 4 --time-dim 4 --embedding-dim 4
          --edge-features "$work/huge.npy" --save "$work/kept")
    rm -rf "$work/kept"
    # The untrained checkpoint: what a diverged run must leave as it is.
    if ! "$twofold" "${args[@]}" --epochs 0 > "$work/out" 2>&1; then
        echo "FAILED: the untrained $model checkpoint was not saved:"; cat "$work/out"; exit 1
    fi
    before=$(cat "$work/kept/"*.npy | cksum)
    check "$model reference" -- "$twofold" "${args[@]}" --epochs 2
    check "$model --impl opt, 2 ranks" -- "$mpiexec" --oversubscribe -n 2 "$twofold" "${args[@]}" --epochs 2 --impl opt
    check "$model --prefetch 1" -- "$mpiexec" --oversubscribe -n 2 "$twofold" "${args[@]}" --epochs 2 --impl opt \
        --prefetch 1
done
[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
