#!/usr/bin/env bash
# Every multi-rank test under each of Open MPI's all-reduce algorithms, forced in turn.
#
# Several tests hold two paths to the same bits across ranks (staleness 0 against synchronous
# training, theta 0 against plain exchange, prefetch depths against none): that holds only if both
# paths' all-reduces add every value in the same order. Open MPI chooses its algorithm from the
# rank count and the message size, and the ring algorithm cuts the values into blocks by their
# count, so two all-reduces of different lengths can add the same value in different orders on one
# machine and alike on another (staleness 0 sent one value fewer than the synchronous trainer and
# differed on an AMD EPYC, never on the Intel Xeon the tests had run on). Forcing each algorithm
# (coll_tuned for the blocking all-reduce, coll_libnbc for the non-blocking one) shows what any
# machine could pick. Not in ctest (about 4 minutes an algorithm on 2 cores); ctest's
# test_async_mpi_3_ring keeps the ring case. Prints one line per algorithm; exit 1 if any failed.
# Usage: verify/allreduce_orders.sh BUILD_DIR [LOG_DIR]
set -u
build=${1:?usage: verify/allreduce_orders.sh BUILD_DIR [LOG_DIR]}
logs=${2:-$(mktemp -d)}
[ -d "$build" ] && [ -f "$build/CTestTestfile.cmake" ] || { echo "$build: not a configured build folder" >&2; exit 2; }
mkdir -p "$logs" || exit 2
export OMPI_MCA_coll_tuned_use_dynamic_rules=1
tests='_mpi_[234]$|test_verify_partition_mpi_3|test_verify_schedule_mpi_3|test_verify_mpi_2|test_ranks_agree'
names=([1]=basic_linear [2]=nonoverlapping [3]=recursive_doubling [4]=ring [5]=segmented_ring [6]=rabenseifner)
nonblocking=([1]=ring [2]=binomial [3]=rabenseifner [4]=recursive_doubling)
failed=0
for blocking in 1 2 3 4 5 6; do
    other=$(( blocking % 4 + 1 )) # every non-blocking algorithm comes up beside some blocking one
    export OMPI_MCA_coll_tuned_allreduce_algorithm=$blocking OMPI_MCA_coll_libnbc_iallreduce_algorithm=$other
    log="$logs/${names[$blocking]}.log"
    ctest --test-dir "$build" -R "$tests" --output-on-failure > "$log" 2>&1
    status=$?
    summary=$(grep -E 'tests passed' "$log" || echo "ctest ended with status $status")
    printf 'all-reduce %-18s  non-blocking %-18s  %s\n' "${names[$blocking]}" "${nonblocking[$other]}" "$summary"
    if [ "$status" -ne 0 ]; then
        failed=1
        grep -E '\*\*\*Failed|Timeout' "$log" | sed 's/^/    /'
    fi
done
echo "logs in $logs"
exit $failed
