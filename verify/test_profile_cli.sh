#!/usr/bin/env bash
# twofold train --profile (chapter 01, Speed) on a small case, 2 epochs: --impl ref, --impl opt,
# and --impl opt on 2 ranks. Each table must have every family's row, the peaks and the roofline
# line, and the families' seconds must sum to at most the run's own "final test MSE ... (T s)",
# which the trainer measures around the epochs without the profiler and prints to 2 decimals (so
# the sum may exceed the printed value by its rounding, 0.005 s, and no more). A --profile the profiler
# cannot serve (--split vertex) must be refused. The event models (TGN, JODIE on a small generated
# stream) the same way, their families' seconds against the sum of their epoch lines' "(T s)",
# printed to 1 decimal (so 0.05 s of rounding an epoch). Prints each table.
# Usage: test_profile_cli.sh TWOFOLD MPIEXEC
set -u
twofold=$(realpath "$1") mpiexec=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
common=(train --model tgcn --data chickenpox --epochs 2 --window 20 --batch 2 --hidden 8 --profile)

# check NAME -- COMMAND...: the table's rows, and the seconds they sum to against the run's time.
check() {
    local name=$1
    shift 2
    if ! "$@" > "$work/out" 2> "$work/err"; then
        echo "FAIL $name: exit status $?: $(cat "$work/err")"
        failures=$((failures + 1))
        return
    fi
    sed -n '/^profile:/,$p' "$work/out"
    for family in dense sparse cells activations loss adam copies communication other; do
        if ! grep -q "^  $family " "$work/out"; then
            echo "FAIL $name: no row for $family"
            failures=$((failures + 1))
        fi
    done
    for line in '^peaks measured now on one core: SGEMM' '^roofline bound: '; do
        if ! grep -q "$line" "$work/out"; then
            echo "FAIL $name: no line $line"
            failures=$((failures + 1))
        fi
    done
    local verdict
    verdict=$(awk '
        /^final test MSE/ { run = $0; sub(/.*\(/, "", run); sub(/ s\).*/, "", run) }
        /^epoch .*train loss .*AP .*s\)$/ { t = $0; sub(/.*\(/, "", t); sub(/ s\).*/, "", t); run += t + 0.05 - 0.005 }
        /^  (dense|sparse|cells|activations|loss|adam|copies|communication) / { sum += $3 }
        END { printf "%s %.6f %s", (run != "" && sum > 0 && sum <= run + 0.005) ? "ok" : "bad", sum, run }' "$work/out")
    echo "$name: families sum to ${verdict#* } s (families, run)"
    if [ "${verdict%% *}" != ok ]; then
        echo "FAIL $name: the families' seconds do not fit in the run's time"
        failures=$((failures + 1))
    fi
}

check ref -- "$twofold" "${common[@]}" --impl ref
check opt -- "$twofold" "${common[@]}" --impl opt
check "opt on 2 ranks" -- "$mpiexec" -n 2 --oversubscribe "$twofold" "${common[@]}" --impl opt

events=(train --data events:nodes=60,events=1500,repeat=0.5,features=2 --epochs 2 --batch 100 --memory-dim 8
        --time-dim 8 --profile)
for model in "tgn --embedding-dim 8" jodie; do
    check "${model%% *} ref" -- "$twofold" "${events[@]}" --model $model --impl ref
    check "${model%% *} opt" -- "$twofold" "${events[@]}" --model $model --impl opt
    check "${model%% *} opt on 2 ranks" -- "$mpiexec" -n 2 --oversubscribe "$twofold" "${events[@]}" --model $model \
        --impl opt
done

"$twofold" "${common[@]}" --impl opt --split vertex --partition hash > "$work/out" 2> "$work/err"
status=$?
if [ $status -eq 0 ] || ! grep -q -- "--profile" "$work/err"; then
    echo "FAIL --profile with --split vertex: exit $status, $(cat "$work/err")"
    failures=$((failures + 1))
else
    echo "refused: $(cat "$work/err")"
fi
exit $((failures > 0))
