#!/usr/bin/env bash
# Ranks that disagree (verify/ERRORS.md, "Ranks that disagree"). Two ranks started by one mpiexec
# with different command lines (Open MPI's "A : B" form, each with its own -wdir where the data
# must differ) must end with exit status 2 and exactly one error line naming what differs, printed
# by one rank, within a time limit (one rank with --impl ref and one with --impl opt once hung for
# ever). A bad input given to every rank is printed once, and --impl ref or an event model without
# --impl opt under mpiexec -n 2 refuses instead of running twice. Ranks that each load their own
# copy of a checkpoint compare epoch, Adam step, parameters and moments (verify/ERRORS.md,
# Checkpoints: the rows under MPI). Each case prints what it measured.
# Usage: test_ranks_agree.sh TWOFOLD MPIEXEC
set -u
twofold=$(realpath "$1") mpiexec=$2
limit=60 # seconds per job: each ends in about one; the limit only catches a hang (TERM first, so
         # that mpiexec ends its ranks: killed outright, it left them spinning in a collective)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/a" "$work/b" "$work/only"
# Two small snapshot files with the same name and different values (a rank per directory).
rows() { local r="" t; for t in 1 2 3 4 5 6 7 8 9 10; do r="$r${r:+, }[$1, $t, 1]"; done; echo "$r"; }
echo "{\"edges\": [[0, 1], [1, 2], [2, 0]], \"weights\": [1, 1, 1], \"FX\": [$(rows 0.5)]}" > "$work/a/d.json"
echo "{\"edges\": [[0, 1], [1, 2], [2, 0]], \"weights\": [1, 1, 1], \"FX\": [$(rows 0.25)]}" > "$work/b/d.json"
cp "$work/a/d.json" "$work/only/d.json"
failures=0

# run NAME EXPECTED_TEXT -- ARGS OF MPIEXEC: exit status 2, one error line containing the text.
run() {
    local name=$1 expected=$2
    shift 3
    local start=$(date +%s%N)
    timeout -k 10 -s TERM "$limit" "$mpiexec" --oversubscribe "$@" > "$work/out" 2> "$work/err"
    local status=$? elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    local errors=$(grep -c 'twofold: error' "$work/err")
    local line=$(grep -m1 'twofold: error' "$work/err")
    printf '%-34s exit %3d in %d.%03d s, %d error line(s): %s\n' "$name" "$status" $((elapsed_ms / 1000)) \
        $((elapsed_ms % 1000)) "$errors" "$line"
    if [ "$status" -ne 2 ] || [ "$errors" -ne 1 ] || ! grep -qF -- "$expected" "$work/err" ||
        grep -q 'MPI_ABORT' "$work/err"; then
        echo "FAILED: expected exit 2 and one line containing '$expected' (and no MPI_Abort); stderr was:"
        cat "$work/err"
        failures=$((failures + 1))
    fi
}

tgcn=(train --model tgcn --data chickenpox --impl opt --batch 2 --epochs 1)
run "--lr differs" "ranks disagree on --lr: rank 0 has 0.01, rank 1 has 0.02" -- \
    -n 1 "$twofold" "${tgcn[@]}" --lr 0.01 : -n 1 "$twofold" "${tgcn[@]}" --lr 0.02
run "--epochs differs" "ranks disagree on --epochs: rank 0 has 1, rank 1 has 2" -- \
    -n 1 "$twofold" "${tgcn[@]}" : -n 1 "$twofold" "${tgcn[@]}" --epochs 2
run "--window given on one rank" "ranks disagree on --window: rank 0 has 4, rank 1 has no --window" -- \
    -n 1 "$twofold" "${tgcn[@]}" --window 4 : -n 1 "$twofold" "${tgcn[@]}"
run "--data differs" "ranks disagree on --data: rank 0 has chickenpox, rank 1 has pedalme" -- \
    -n 1 "$twofold" "${tgcn[@]}" : -n 1 "$twofold" train --model tgcn --data pedalme --impl opt --batch 2 --epochs 1
run "--train-ratio differs" "ranks disagree on --train-ratio: rank 0 has 0.5, rank 1 has 0.8" -- \
    -n 1 "$twofold" "${tgcn[@]}" --train-ratio 0.5 : -n 1 "$twofold" "${tgcn[@]}" --train-ratio 0.8
run "--memory-limit on one rank" "ranks disagree on --memory-limit: rank 0 has 8.0 GiB, rank 1 has no --memory-limit" -- \
    -n 1 "$twofold" --memory-limit 8G "${tgcn[@]}" : -n 1 "$twofold" "${tgcn[@]}"
ref=(train --model tgcn --data chickenpox --batch 2 --epochs 1)
run "--impl ref on rank 0, opt on 1" "ranks disagree on --impl: rank 0 has ref, rank 1 has opt" -- \
    -n 1 "$twofold" "${ref[@]}" --impl ref : -n 1 "$twofold" "${ref[@]}" --impl opt
run "same --data, other contents" "ranks disagree on the data of --data" -- \
    -n 1 -wdir "$work/a" "$twofold" train --model tgcn --data d.json --lags 2 --impl opt --epochs 1 : \
    -n 1 -wdir "$work/b" "$twofold" train --model tgcn --data d.json --lags 2 --impl opt --epochs 1
run "--data missing on rank 1 only" "rank 1 of 2: " -- \
    -n 1 -wdir "$work/only" "$twofold" train --model tgcn --data d.json --lags 2 --impl opt --epochs 1 : \
    -n 1 -wdir "$work" "$twofold" train --model tgcn --data d.json --lags 2 --impl opt --epochs 1
split=(train --model tgcn --data chickenpox --impl opt --split vertex --partition hash --epochs 1)
run "--split vertex, --seed differs" "ranks disagree on --seed: rank 0 has 1, rank 1 has 2" -- \
    -n 1 "$twofold" "${split[@]}" --seed 1 : -n 1 "$twofold" "${split[@]}" --seed 2
tgn=(train --model tgn --data events:nodes=40,events=400 --memory-dim 4 --time-dim 4 --embedding-dim 4 --epochs 1)
run "tgn --lr differs" "ranks disagree on --lr: rank 0 has 0.001, rank 1 has 0.002" -- \
    -n 1 "$twofold" "${tgn[@]}" --impl opt --lr 0.001 : -n 1 "$twofold" "${tgn[@]}" --impl opt --lr 0.002
run "tgn on rank 0, tgcn on rank 1" "ranks disagree on --model: rank 0 has tgn, rank 1 has tgcn" -- \
    -n 1 "$twofold" "${tgn[@]}" --impl opt : -n 1 "$twofold" "${tgcn[@]}"
# The same bad input on every rank: one line, not one per rank.
run "bad --lr on 3 ranks" 'option --lr: "fast", expected a number in (0, 1000)' -- \
    -n 3 "$twofold" "${tgcn[@]}" --lr fast
run "missing --data file on 3 ranks" "/nonexistent/graph.json" -- \
    -n 3 "$twofold" train --model tgcn --data /nonexistent/graph.json --impl opt
run "bad --load on 2 ranks" "no such checkpoint" -- -n 2 "$twofold" "${tgcn[@]}" --load /nonexistent/checkpoint
# One run, started twice: refused with what runs distributed.
run "--impl ref under mpiexec -n 2" "what runs distributed is --impl opt" -- -n 2 "$twofold" "${ref[@]}"
run "tgn without --impl opt, -n 2" "what runs distributed is --impl opt" -- -n 2 "$twofold" "${tgn[@]}"
# The other subcommands that run under mpiexec agree on their command lines too, before any other
# collective: a bad option, or --ranks that is not the run's, is one line, not one per rank.
run "verify: bad option on 2 ranks" "verify: unknown option --bogus" -- -n 2 "$twofold" verify --bogus
run "demo: bad argument on 2 ranks" "demo: unknown option --bogus" -- -n 2 "$twofold" demo --bogus
run "verify --ranks 3 on 2 ranks" "verify: --ranks 3, but this run has 2 rank(s)" -- \
    -n 2 "$twofold" verify --ranks 3 --data chickenpox
# Every rank fails at once here: the ranks that do not report used to leave at once, and mpiexec
# ended the job now and then before the reporting rank had written its line (0 lines). Repeated.
for attempt in 1 2 3 4; do
    run "schedule --run --ranks 3 on 2 ($attempt)" "schedule: --run with --ranks 3, but this run has 2 rank(s)" -- \
        -n 2 "$twofold" schedule --data chickenpox --ranks 3 --run
done
run "schedule: --hidden differs" "ranks disagree on --hidden" -- \
    -n 1 "$twofold" schedule --data chickenpox --ranks 2 --run --hidden 4 : \
    -n 1 "$twofold" schedule --data chickenpox --ranks 2 --run --hidden 8
# The words besides the options are compared too: verify and demo ranks naming other techniques
# would run other rows and wait in each other's collectives at 100 % CPU for ever. The same
# techniques in another order are the same run.
run "verify: techniques differ" \
    "ranks disagree on the arguments besides options: rank 0 has none, rank 1 has train" -- \
    -n 1 "$twofold" verify --data pedalme : -n 1 "$twofold" verify train --data pedalme
run "demo: techniques differ" \
    "ranks disagree on the arguments besides options: rank 0 has schedule_hybrid, rank 1 has fusion train" -- \
    -n 1 "$twofold" demo schedule_hybrid : -n 1 "$twofold" demo train fusion
timeout -k 10 -s TERM "$limit" "$mpiexec" --oversubscribe -n 1 "$twofold" verify train fusion --data pedalme : \
    -n 1 "$twofold" verify fusion train --data pedalme > "$work/out" 2> "$work/err"
status=$?
echo "verify: same techniques, reordered exit $status: $(grep '^#' "$work/out")"
if [ "$status" -ne 0 ] || ! grep -q '#wrong 0' "$work/out"; then
    echo "FAILED: ranks naming the same techniques in another order did not run"; cat "$work/out" "$work/err"
    failures=$((failures + 1))
fi

# A resumed run: each rank reads its own copy of a checkpoint (one -wdir
# each), and the copies differ in what the parameters alone do not show. Before, the ranks
# compared only the parameters: they trained on from other epochs, steps or moments (another
# result, or MPI's own error); now one line names what differs. Checkpoints from one-process runs.
# Windows of 50, so --batch 1 takes more Adam steps per epoch than --batch 2 (the counts derived
# from the train snapshots the run prints: one step per --batch windows).
"$twofold" train --model tgcn --data chickenpox --window 50 --batch 2 --epochs 1 --save "$work/ck2" > "$work/out"
last=$(sed -n 's/^train snapshots 0\.\.\([0-9]*\),.*/\1/p' "$work/out")
windows=$(( (last + 1 + 49) / 50 ))
steps1=$windows steps2=$(( (windows + 1) / 2 ))
echo "checkpoints: $((last + 1)) train snapshots, $windows windows of 50: $steps1 Adam steps with --batch 1, $steps2 with --batch 2"
"$twofold" train --model tgcn --data chickenpox --window 50 --batch 1 --epochs 1 --save "$work/ck1" > /dev/null
"$twofold" "${tgn[@]}" --save "$work/ckt" > /dev/null
for d in same copy epoch moments step tgn-same tgn-epoch; do mkdir -p "$work/$d"; done
cp -r "$work/ck2" "$work/same/ck"; cp -r "$work/ck2" "$work/copy/ck"; cp -r "$work/ck2" "$work/epoch/ck"; cp -r "$work/ck2" "$work/moments/ck"
cp -r "$work/ck2" "$work/step/ck"; cp -r "$work/ckt" "$work/tgn-same/ck"; cp -r "$work/ckt" "$work/tgn-epoch/ck"
rm "$work/epoch/ck/trainer.npy" "$work/tgn-epoch/ck/trainer.npy" # parameters only: epoch 0, fresh Adam
cp "$work/ck1"/adam.* "$work/moments/ck/"                         # same parameters, epoch and step
cp "$work/ck1/trainer.npy" "$work/step/ck/"                         # same epoch, parameters and moments
resume=(train --model tgcn --data chickenpox --impl opt --window 50 --batch 2 --epochs 2 --load ck)
run "--load: copy without trainer.npy" "rank 1 resumes from another state than rank 0: epoch 0 vs 1 on rank 0" -- \
    -n 1 -wdir "$work/same" "$twofold" "${resume[@]}" : -n 1 -wdir "$work/epoch" "$twofold" "${resume[@]}"
run "--load: other Adam moments" "rank 1 resumes from another state than rank 0: Adam moments differ" -- \
    -n 1 -wdir "$work/same" "$twofold" "${resume[@]}" : -n 1 -wdir "$work/moments" "$twofold" "${resume[@]}"
run "--load: other Adam step" "rank 1 resumes from another state than rank 0: Adam step $steps1 vs $steps2 on rank 0" -- \
    -n 1 -wdir "$work/same" "$twofold" "${resume[@]}" : -n 1 -wdir "$work/step" "$twofold" "${resume[@]}"
vertex=(train --model tgcn --data chickenpox --impl opt --split vertex --partition hash --window 50 --batch 2 --epochs 2
    --load ck)
run "--split vertex --load: no trainer.npy" "rank 1 resumes from another state than rank 0: epoch 0 vs 1 on rank 0" -- \
    -n 1 -wdir "$work/same" "$twofold" "${vertex[@]}" : -n 1 -wdir "$work/epoch" "$twofold" "${vertex[@]}"
tgn_resume=(train --model tgn --data events:nodes=40,events=400 --memory-dim 4 --time-dim 4 --embedding-dim 4 \
    --epochs 2 --impl opt --load ck)
run "tgn --load: no trainer.npy" "rank 1 resumes from another state than rank 0: epoch 0 vs 1 on rank 0" -- \
    -n 1 -wdir "$work/tgn-same" "$twofold" "${tgn_resume[@]}" : -n 1 -wdir "$work/tgn-epoch" "$twofold" "${tgn_resume[@]}"
# Copies that agree resume together and finish the second epoch.
timeout -k 10 -s TERM "$limit" "$mpiexec" --oversubscribe -n 1 -wdir "$work/same" "$twofold" "${resume[@]}" : \
    -n 1 -wdir "$work/copy" "$twofold" "${resume[@]}" > "$work/out" 2> "$work/err"
status=$?
echo "--load: two equal copies           exit $status: $(grep '^final' "$work/out")"
if [ "$status" -ne 0 ] || ! grep -q '^final test MSE' "$work/out"; then
    echo "FAILED: two ranks resuming from equal copies did not train"; cat "$work/out" "$work/err"
    failures=$((failures + 1))
fi

# Ranks that agree still train, and say nothing of it.
timeout -k 10 -s TERM "$limit" "$mpiexec" --oversubscribe -n 2 "$twofold" "${tgcn[@]}" > "$work/out" 2> "$work/err"
status=$?
echo "agreeing ranks                     exit $status: $(grep '^final' "$work/out")"
if [ "$status" -ne 0 ] || ! grep -q '^final test MSE' "$work/out"; then
    echo "FAILED: two agreeing ranks did not train"; cat "$work/out" "$work/err"; failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || { echo "$failures case(s) failed"; exit 1; }
