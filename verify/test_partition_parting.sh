#!/usr/bin/env bash
# bench_partition_parting's verdict can fail: on two ranks, T-GCN with pts's split of twitter_tennis
# (one epoch, 6 Adam steps) is "equal" (the split the reference's at its own parameters at every
# step) with exit status 0; with one gradient of the twin spoiled at every step
# (TWOFOLD_BREAK_TWIN=partition) it is WRONG with exit status 1. Prints both verdicts.
# Usage: test_partition_parting.sh BENCH_PARTITION_PARTING MPIEXEC
set -u
tool=$1 mpiexec=$2
failed=0
run() { # expected-status expected-verdict [environment...]
    local want_status=$1 want=$2 output status
    shift 2
    output=$(env "$@" "$mpiexec" -n 2 --oversubscribe "$tool" tgcn twitter_tennis pts exchange 1 2>/dev/null)
    status=$?
    local verdict
    verdict=$(printf '%s\n' "$output" | tail -n 1)
    echo "${*:-unspoiled}: exit status $status, $verdict"
    if [ "$status" != "$want_status" ] || [[ $verdict != "$want"* ]]; then
        echo "  expected exit status $want_status and a verdict starting '$want'"
        failed=1
    fi
}
run 0 "equal:" OMP_NUM_THREADS=1
run 1 "WRONG:" OMP_NUM_THREADS=1 TWOFOLD_BREAK_TWIN=partition
exit $failed
