#!/usr/bin/env bash
# Ranks, verify and options (verify/ERRORS.md, the section of that name): what the ranks compare
# (the command, every file they read), what verify skips and why, bounds on run time, options
# refused where they do not apply, messages that name their file. Each case prints what it
# measured; MPI cases run on 2 ranks, under a time limit that only catches a hang.
# Usage: test_ranks_options.sh TWOFOLD MPIEXEC
set -u
twofold=$(realpath "$1") mpiexec=$2
limit=60
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# expect STATUS TEXT NAME -- COMMAND...: the exit status, and TEXT in stderr (one error line, for
# 2 and 3) or, for status 0 and 1, in stdout.
expect() {
    local status=$1 expected=$2 name=$3
    shift 4
    local start=$(date +%s%N)
    timeout -k 10 -s TERM "$limit" "$@" > "$work/out" 2> "$work/err"
    local got=$? elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    local errors=$(grep -c 'twofold: error' "$work/err")
    local where="$work/err"
    [ "$status" -ge 2 ] || where="$work/out"
    printf '%-40s exit %3d in %d.%03d s: %s\n' "$name" "$got" $((elapsed_ms / 1000)) $((elapsed_ms % 1000)) \
        "$(grep -m1 -F -- "$expected" "$where" || head -c 300 "$work/err")"
    if [ "$got" -ne "$status" ] || ! grep -qF -- "$expected" "$where" || { [ "$status" -ge 2 ] && [ "$errors" -ne 1 ]; } ||
        grep -q 'MPI_ABORT' "$work/err"; then
        fail "$name: expected exit $status and '$expected' (one error line for 2, no MPI_ABORT); stdout, stderr:"
        tail -5 "$work/out"
        cat "$work/err"
    fi
}

# expect_on_ladder TEXT NAME "LIMITS" -- COMMAND...: COMMAND with @LIMIT@ replaced by each limit in
# turn. How much is in use when training starts depends on the build (a CUDA build holds more), so a
# failure mid-training is sought over a ladder of --memory-limit values: every run ends with exit 0
# or 2, at most one error line and no MPI_ABORT page, and at least one fails with TEXT.
expect_on_ladder() {
    local expected=$1 name=$2 limits=$3 hit=0
    shift 4
    for L in $limits; do
        local command=("${@//@LIMIT@/$L}")
        timeout -k 10 -s TERM "$limit" "${command[@]}" > "$work/out" 2> "$work/err"
        local got=$? errors=$(grep -c 'twofold: error' "$work/err")
        printf '%-40s exit %3d: %s\n' "$name, $L" "$got" "$(grep -m1 'twofold: error' "$work/err")"
        if { [ "$got" -ne 0 ] && [ "$got" -ne 2 ]; } || [ "$errors" -gt 1 ] || grep -q 'MPI_ABORT' "$work/err"; then
            fail "$name, $L: expected exit 0 or 2, at most one error line, no MPI_ABORT; stderr:"
            cat "$work/err"
        fi
        grep -qF -- "$expected" "$work/err" && hit=1
    done
    [ "$hit" -eq 1 ] || fail "$name: no limit of $limits failed with '$expected'"
}

# --- verify on a one-vertex graph with a self-loop: the twins agree, verify says so -------------
# (Adam turned the opt kernels' last-bit rounding of a gradient that is zero to float precision into
# 1.8e-05 > 1e-05 for tgcn on this graph; chapter 01, "What verify compares".)
echo '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[2.17], [-1.108], [0.326], [-0.261], [-0.879], [-0.574], [-0.519], [-0.099], [0.387], [1.013], [0.199], [1.084]]}' > "$work/one_vertex.json"
expect 0 "#wrong 0" "verify train on one vertex, 1 rank" -- "$twofold" verify train schedule --data "$work/one_vertex.json"
grep 'train ' "$work/out"
expect 0 "#wrong 0" "verify train on one vertex, 2 ranks" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" verify train schedule --data "$work/one_vertex.json"
grep -qE 'equal logic, rounding amplified [0-9]|not comparable:' "$work/out" &&
    fail "N(0, 1) features: every row within the tolerance (no 'equal logic', no 'not comparable')"

# --- the same graph with features up to +-100: rows past the tolerance prove the twin's logic, none WRONG -
# (On such data the opt kernels' last-bit rounding grows past the 1e-05 tolerance: the rows said WRONG
# where the twin run on the reference's kernels is bitwise the reference; now each such row runs that
# twin and says so; chapter 01, "What verify compares".)
echo '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[-52.79], [-79.367], [-20.788], [-69.006], [-86.697], [-19.682], [83.591], [60.09], [53.033], [-55.614], [7.336], [-44.663]]}' > "$work/one_vertex_100.json"
for ranks in 1 2; do
    expect 0 "#wrong 0" "verify on one vertex, features +-100, $ranks rank(s)" -- \
        "$mpiexec" --oversubscribe -n $ranks "$twofold" verify train schedule --data "$work/one_vertex_100.json"
    grep -E -A1 'equal logic, rounding amplified [0-9]|not comparable:' "$work/out" | grep -v '^--' | sed 's/  */ /g'
    grep -qE 'equal logic, rounding amplified [0-9]' "$work/out" || fail "features +-100, $ranks rank(s): no row says 'equal logic'"
    # a spoiled twin on the same data is WRONG, exit 1: its rerun on the reference's kernels differs too.
    # On 2 ranks the schedule rows too: they add in another order, and a spoiled twin's error (1.2, 3.0)
    # is orders of magnitude past the reference's own one-ulp spread (2.6e-5, 6.5e-5); those rows once
    # said "not comparable" for it. (On 1 rank the greedy schedule's reference spreads by 0.67 on this
    # graph, as far as a spoiled value moves it: there no row can tell, and says "not comparable".)
    spoiled=train; [ $ranks -eq 2 ] && spoiled="train schedule"
    expect 1 "#wrong" "verify, spoiled twins of $spoiled, features +-100, $ranks rank(s)" -- env TWOFOLD_BREAK_TWIN=all \
        "$mpiexec" --oversubscribe -n $ranks -x TWOFOLD_BREAK_TWIN "$twofold" verify $spoiled --data "$work/one_vertex_100.json"
    grep -qE 'equal logic, rounding amplified [0-9]|not comparable:' "$work/out" &&
        fail "spoiled twin, $ranks rank(s): a row says 'equal logic' or 'not comparable'"
    footer=$(grep -m1 '^# [0-9]* row(s)' "$work/out")
    read -r rows skipped wrong <<< "$(sed -E 's/^# ([0-9]+) row.*, ([0-9]+) skipped.*#wrong ([0-9]+)$/\1 \2 \3/' <<< "$footer")"
    echo "  spoiled: $footer"
    [ "$wrong" -gt 0 ] && [ "$wrong" -eq $((rows - skipped)) ] || fail "spoiled twin, $ranks rank(s): not every row WRONG"
done

# The partition entry (chapter 06) on the same graph, 1 rank (2 need a vertex each): its matrix said
# WRONG for evolvegcn, gcrnm1, cdgcn and gatlstm (1.1e-05 to 2.7e-05, exit 1) with no rerun on the
# reference's kernels to tell; now it reruns the split on them (bitwise: "amp"), and on several ranks,
# where the split adds in another order, measures the reference's spread. A spoiled twin stays WRONG.
expect 0 "#wrong 0" "verify partition, features +-100, 1 rank" -- "$twofold" verify partition --data "$work/one_vertex_100.json"
amplified=$(grep -c '^  [a-z0-9]* .* amp' "$work/out")
grep -m1 '^# matrix' "$work/out"
[ "$amplified" -ge 1 ] || fail "verify partition, features +-100: no matrix cell says amp (the case it was made for)"
expect 1 "#wrong 11" "verify partition, spoiled twin, features +-100" -- env TWOFOLD_BREAK_TWIN=partition \
    "$twofold" verify partition --data "$work/one_vertex_100.json"
grep -qE 'equal logic, rounding amplified [0-9]|not comparable:' "$work/out" &&
    fail "verify partition, spoiled twin: a row says 'equal logic' or 'not comparable'"

# ReInc's two training entries on a triangle with self-loops and features up to +-100: their rows
# said WRONG (1.5e-05 and 4.4e-04, five matrix cells too, exit 1) where the reference itself moves
# further under a one-ulp change of its inputs (2.2e-05, 6.6e-03). Both add in another order than the
# reference by design (the engine's deltas; the ranks), so they now rerun a fresh pair and let the
# reference's spread decide: "not comparable". A spoiled twin is still WRONG on both rows.
echo '{"edges": [[0, 1], [1, 2], [2, 0], [0, 0], [1, 1], [2, 2]], "node_ids": {"A": 0, "B": 1, "C": 2}, "FX": [[-52.79, -79.367, -20.788], [-69.006, -86.697, -19.682], [83.591, 60.09, 53.033], [-55.614, 7.336, -44.663], [-65.467, -78.763, -57.12], [85.495, 65.784, 61.33], [60.09, -61.313, -38.03], [25.395, 46.379, 70.93], [76.01, -82.656, 21.17], [34.34, 1.191, -64.442], [-5.282, -82.131, 86.918], [73.097, 9.528, -39.951], [81.774, 14.473, 76.463], [69.609, 1.674, -17.211]]}' > "$work/triangle_100.json"
for ranks in 1 2; do
    expect 0 "#wrong 0" "verify ReInc training, triangle +-100, $ranks rank(s)" -- \
        "$mpiexec" --oversubscribe -n $ranks "$twofold" verify incremental_train minibatch --data "$work/triangle_100.json"
    incomparable=$(grep -c "^  02  ReInc [a-z -]* triangle_100 .*not comparable: a one-ulp change" "$work/out")
    grep "^  02  ReInc [a-z -]* triangle_100 " "$work/out" | sed 's/  */ /g'
    [ "$incomparable" -eq 2 ] || fail "ReInc training, triangle +-100, $ranks rank(s): $incomparable of 2 rows not comparable"
done
expect 1 "#wrong" "verify ReInc training, spoiled twins, triangle +-100" -- env TWOFOLD_BREAK_TWIN=all \
    "$twofold" verify incremental_train minibatch --data "$work/triangle_100.json"
wrong_rows=$(grep -c "^  02  ReInc [a-z -]* triangle_100 .*WRONG" "$work/out")
[ "$wrong_rows" -eq 2 ] || fail "ReInc training, spoiled twins: $wrong_rows of 2 rows WRONG"

# --- the one-vertex graph with features near 1e30: the reference's own training leaves float's range
# (Every training row said "WRONG inf" and the run exited 1, blaming twins whose reference had NaN
# parameters after its first epochs; now such a row names the reference's first value that is not
# finite and says "not comparable": nothing can be held to inf and NaN. The aggregation rows, whose
# answers stay finite, still compare.)
echo '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[2.17e30], [-1.108e30], [0.326e30], [-0.261e30], [-0.879e30], [-0.574e30], [-0.519e30], [-0.099e30], [0.387e30], [1.013e30], [0.199e30], [1.084e30]]}' > "$work/one_vertex_1e30.json"
for ranks in 1 2; do
    expect 0 "#wrong 0" "verify on one vertex, features near 1e30, $ranks rank(s)" -- \
        "$mpiexec" --oversubscribe -n $ranks "$twofold" verify train incremental --data "$work/one_vertex_1e30.json"
    diverged=$(grep -c "not comparable: the reference's parameter .* is -\?\(nan\|inf\) at value" "$work/out")
    compared=$(grep -c '^  02  ReInc incremental .* ok \|^  02  ReInc incremental .* bitwise equal' "$work/out")
    echo "  $diverged rows not comparable (the reference not finite), $compared aggregation rows compared"
    grep -m1 -A1 "not comparable: the reference's" "$work/out" | sed 's/  */ /g'
    [ "$diverged" -ge 14 ] || fail "features near 1e30, $ranks rank(s): fewer than 14 rows name the reference's non-finite value"
    [ "$compared" -eq 6 ] || fail "features near 1e30, $ranks rank(s): the 6 aggregation rows did not all compare"
done

# --- failures mid-run on one rank: one line, the documented status, no MPI_ABORT page ----------------
# A full disk under the writing rank (exit 3): the test's full disk is a file size limit set in each
# rank (shared memory between ranks would hit it too, so they talk over TCP here).
expect 3 "ck.partial/" "--save on a full disk, 2 ranks" -- env OMPI_MCA_btl=self,tcp "$mpiexec" --oversubscribe -n 2 \
    bash -c "ulimit -f 8; trap '' XFSZ; exec '$twofold' train --impl opt --model tgcn --epochs 1 --data chickenpox --save '$work/ck'"
grep -q 'write failed' "$work/err" || fail "--save on a full disk, 2 ranks: no 'write failed' line"
# --memory-limit passed mid-training on one rank: the T-GCN step's all-reduce carries the failure, so
# every rank stops there (rank 1 holds no window of the step and was waiting in it).
expect_on_ladder "too large for memory: hidden states needs" "--memory-limit mid-training, T-GCN, 2 ranks" \
    "56M 64M 72M 80M" -- "$mpiexec" --oversubscribe -n 2 "$twofold" --memory-limit @LIMIT@ train --impl opt \
    --model tgcn --epochs 2 --hidden 64 --data powerlaw:nodes=20000,edges=100000,snapshots=10
# Under --staleness 1 the failing rank leaves the step's all-reduce in flight on the others: its
# status goes out on a communicator of its own (comm::control), since offered on the training one it
# was matched with that all-reduce and rank 0 died of a segmentation fault in MPI_Test.
expect_on_ladder "too large for memory: hidden states needs" "--memory-limit mid-training, T-GCN, staleness 1" \
    "56M 64M 72M" -- "$mpiexec" --oversubscribe -n 2 "$twofold" --memory-limit @LIMIT@ train --impl opt \
    --model tgcn --epochs 2 --hidden 64 --data powerlaw:nodes=20000,edges=100000,snapshots=10 --staleness 1
# TGN's batches have no such step: the failing rank names itself and leaves with the status after
# the few seconds it waits for the others; mpiexec ends the rest. (The batch workspace lives for the
# whole run and grows to the largest batch, so the limits that fail mid-training are higher than
# when each batch allocated its own.)
expect_on_ladder "of 2: too large for memory: memory updater gradients needs" "--memory-limit mid-training, TGN, 2 ranks" \
    "60M 64M 68M 72M 76M 80M 84M" -- "$mpiexec" --oversubscribe -n 2 "$twofold" --memory-limit @LIMIT@ train --impl opt \
    --model tgn --epochs 1 --data events:nodes=20000,events=40000
# (a failed set-up once read the events it had not loaded: a segmentation fault at 12M on 1 rank)
expect 2 "too large for memory" "--memory-limit 12M, TGN set-up, 1 rank" -- \
    "$twofold" --memory-limit 12M train --impl opt --model tgn --epochs 1 --data events:nodes=20000,events=40000

# --- one-process commands under mpiexec -n 2: a failure is one line, not one per rank ---------------
expect 2 "/nonexistent/graph.json: cannot open" "info on a missing file, 2 ranks" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" info /nonexistent/graph.json
expect 2 "export: run it as one process, not under mpiexec -n 2" "export, 2 ranks" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" export --data chickenpox --out "$work/exported"
# (partition printed its table once per rank and each rank wrote --save, racing for one path)
expect 2 "partition: run it as one process (it splits for --ranks 2 without MPI), not under mpiexec -n 2" \
    "partition --save, 2 ranks" -- "$mpiexec" --oversubscribe -n 2 "$twofold" partition --data chickenpox --ranks 2 \
    --method hash --save "$work/owners.npy"
[ -e "$work/owners.npy" ] && fail "partition under mpiexec -n 2 wrote --save"

# --- an MPMD job that mixes commands: one line on every launch, never a hang ----------------------
D=powerlaw:nodes=200,edges=1000,snapshots=6
for launch in 1 2 3 4; do
    expect 2 "ranks disagree on the command: rank 0 runs info, rank 1 runs train" "info : train, launch $launch" -- \
        "$mpiexec" --oversubscribe -n 1 "$twofold" info "$D" : -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D"
done
expect 2 "ranks disagree on the command: rank 0 runs partition, rank 1 runs verify" "partition : verify" -- \
    "$mpiexec" --oversubscribe -n 1 "$twofold" partition --data "$D" --ranks 2 --method hash : -n 1 "$twofold" verify --data "$D"
expect 2 "ranks disagree on the command: rank 0 runs --help, rank 1 runs train" "--help : train" -- \
    "$mpiexec" --oversubscribe -n 1 "$twofold" --help : -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D"
expect 2 "rank 0 of 2: unknown option --bogus (see twofold --help)" "twofold --bogus : train" -- \
    "$mpiexec" --oversubscribe -n 1 "$twofold" --bogus : -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D"
expect 0 "vertices" "info under mpiexec -n 2 (one command)" -- "$mpiexec" --oversubscribe -n 2 "$twofold" info "$D"

# --- --memory-limit is the whole run's budget: each of 2 ranks has half ----------------------------
# (one process loads this graph under 16M; before, each rank had the whole 24M and the run went on)
big=powerlaw:nodes=20000,edges=100000,snapshots=4
expect 2 "over the --memory-limit of 24.0 MiB (12.0 MiB for each of 2 ranks)" "--memory-limit 24M on 2 ranks" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" --memory-limit 24M train --impl opt --model tgcn --epochs 1 --data "$big"
expect 0 "loaded in" "--memory-limit 24M on 1 process" -- "$twofold" --memory-limit 24M info "$big"

# --- every file a rank reads is compared: --edge-features, --placement file: -----------------------
# npy_f32 FILE ROWS COLUMNS WORD: a float32 .npy [ROWS][COLUMNS] of one 4-byte word repeated.
npy_f32() {
    local header="{'descr': '<f4', 'fortran_order': False, 'shape': ($2, $3), }"
    while [ $(( (10 + ${#header} + 1) % 64 )) -ne 0 ]; do header="$header "; done
    {
        printf '\x93NUMPY\x01\x00'
        printf "\\x$(printf %02x $(( (${#header} + 1) % 256 )))\\x$(printf %02x $(( (${#header} + 1) / 256 )))"
        printf '%s\n' "$header"
        for _ in $(seq $(($2 * $3))); do printf "$4"; done
    } > "$1"
}
E=events:nodes=100,events=1000
mkdir -p "$work/a" "$work/b"
npy_f32 "$work/a/ef.npy" 1000 2 '\x00\x00\x80\x3f' # 1.0
npy_f32 "$work/b/ef.npy" 1000 2 '\x00\x00\x00\x3f' # 0.5
tgn=(train --model tgn --impl opt --data "$E" --epochs 1)
expect 2 "ranks disagree on the data of --edge-features: rank 0 loaded digest" "--edge-features: other contents" -- \
    "$mpiexec" --oversubscribe -n 1 -wdir "$work/a" "$twofold" "${tgn[@]}" --edge-features ef.npy : \
    -n 1 -wdir "$work/b" "$twofold" "${tgn[@]}" --edge-features ef.npy
mkdir -p "$work/c"
expect 2 "rank 1 of 2: ef.npy: cannot open" "--edge-features missing on rank 1" -- \
    "$mpiexec" --oversubscribe -n 1 -wdir "$work/a" "$twofold" "${tgn[@]}" --edge-features ef.npy : \
    -n 1 -wdir "$work/c" "$twofold" "${tgn[@]}" --edge-features ef.npy
"$twofold" partition --data "$E" --ranks 2 --method hash --save "$work/a/p.npy" > /dev/null
"$twofold" partition --data "$E" --ranks 2 --method pts --save "$work/b/p.npy" > /dev/null
expect 2 "ranks disagree on the data of --placement: rank 0 loaded digest" "--placement file: other contents" -- \
    "$mpiexec" --oversubscribe -n 1 -wdir "$work/a" "$twofold" "${tgn[@]}" --placement file:p.npy : \
    -n 1 -wdir "$work/b" "$twofold" "${tgn[@]}" --placement file:p.npy
expect 2 "rank 1 of 2: p.npy: cannot open" "--placement file: missing on rank 1" -- \
    "$mpiexec" --oversubscribe -n 1 -wdir "$work/a" "$twofold" "${tgn[@]}" --placement file:p.npy : \
    -n 1 -wdir "$work/c" "$twofold" "${tgn[@]}" --placement file:p.npy
expect 0 "AP" "the same files on both ranks" -- "$mpiexec" --oversubscribe -n 2 -wdir "$work/a" "$twofold" "${tgn[@]}" \
    --edge-features ef.npy --placement file:p.npy

# --- an output path one rank cannot use is refused before training, naming what is wrong with it ----
# (rank 0, the writing rank, sees a regular file x where its --save or --dump-outputs wants the
# directory x; the message said "the directory x does not exist; create it first" there too)
mkdir -p "$work/d/x" && touch "$work/c/x"
D8=powerlaw:nodes=200,edges=1000,snapshots=8
for option in --save --dump-outputs; do
    expect 2 "rank 0 of 2: $([ $option = --dump-outputs ] && echo 'train: ')$option x/out: x is a regular file, not a directory" \
        "$option x/out, x a file on rank 0" -- "$mpiexec" --oversubscribe -n 1 -wdir "$work/c" "$twofold" train --impl opt \
        --model tgcn --epochs 1 --data "$D8" $option x/out : -n 1 -wdir "$work/d" "$twofold" train --impl opt \
        --model tgcn --epochs 1 --data "$D8" $option x/out
done

# --sync average cannot resume a checkpoint (one Adam state per rank, one in the file): the line
# names --load, where it told the user to "save from a synchronous run", which they had done
"$twofold" train --impl opt --model tgcn --epochs 1 --data "$D8" --save "$work/d/ck" > /dev/null
expect 2 "train: --sync average keeps one Adam state per rank and a checkpoint holds one: drop --load" \
    "--load into --sync average, 2 ranks" -- "$mpiexec" --oversubscribe -n 2 "$twofold" train --impl opt --model tgcn \
    --epochs 2 --data "$D8" --load "$work/d/ck" --sync average

# --- verify skips what does not apply, with the reason in the row ------------------------------------
expect 0 "#wrong 0" "verify on edge-less data, 2 ranks" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" verify --data powerlaw:nodes=2,edges=0,snapshots=5
grep -F "none in any snapshot" "$work/out" | head -1 || fail "no row says why the fusion rows were skipped"
grep -q "temporal fusion.*needs edges" "$work/out" || fail "the temporal fusion rows do not say they need edges"
expect 0 "needs a vertex for each rank; one_vertex has 1 for 2 ranks" "verify on one vertex, 2 ranks: partition" -- \
    "$mpiexec" --oversubscribe -n 2 "$twofold" verify partition --data "$work/one_vertex.json"
# verify's ranks compare the data they loaded (the same name, other contents: one line, not a hang)
cp "$work/one_vertex.json" "$work/a/d.json"
sed 's/2.17/2.5/' "$work/one_vertex.json" > "$work/b/d.json"
expect 2 "ranks disagree on the data of --data" "verify: same --data, other contents" -- \
    "$mpiexec" --oversubscribe -n 1 -wdir "$work/a" "$twofold" verify train --data d.json : \
    -n 1 -wdir "$work/b" "$twofold" verify train --data d.json

# --- schedule: run-time bounds and nonsense refused -------------------------------------------------
expect 2 "makes 99997 groups, more than the simulator's limit of 4096" "schedule --simulate --snapshots 100000" -- \
    "$twofold" schedule --data "$D" --ranks 2 --simulate --snapshots 100000 --cost linear:1,1,1 --sim-ranks 4
expect 2 "schedule: greedy on 5000 groups is more than its limit of 4096" "schedule --times of 5000 groups" -- \
    "$twofold" schedule --times "$(seq 1 5000 | paste -sd,)" --ranks 4
expect 0 "lpt" "the same with --method lpt" -- "$twofold" schedule --times "$(seq 1 5000 | paste -sd,)" --ranks 4 --method lpt
# train --schedule greedy has the same limit, through the same check, before any window is timed
expect 2 "train: greedy on 4800 groups is more than its limit of 4096" "train --schedule greedy on 4800 windows" -- \
    "$twofold" train --impl opt --model tgcn --epochs 1 --schedule greedy --window 2 --stride 1 \
    --data powerlaw:nodes=10,edges=10,snapshots=6000
expect 0 "greedy" "schedule --simulate --snapshots 300 (rows as they come)" -- \
    "$twofold" schedule --data "$D" --ranks 2 --simulate --snapshots 300 --cost linear:1,1,1 --sim-ranks 4,16
[ "$(grep -c '^ *16 .*greedy' "$work/out")" -eq 1 ] || fail "no greedy row for 16 ranks"
expect 2 "schedule: --times gives the groups inf s in all, more than 1e+09 s" "schedule --times 1e308,1e308,1e308" -- \
    "$twofold" schedule --times 1e308,1e308,1e308 --ranks 2
expect 2 "schedule: --cost linear:0,0,0 gives every group a time of 0 s" "schedule --cost linear:0,0,0" -- \
    "$twofold" schedule --data "$D" --ranks 2 --cost linear:0,0,0

# --- twitter_tennis layout: a negative degree or count is refused, not encoded ----------------------
tennis() { # tennis FILE X_ROW Y0: two snapshots of two vertices
    local step
    for step in 0 1; do
        printf '"%d": {"index": %d, "edges": [[0, 1]], "weights": [1], "y": [%s, 1], "X": [%s, [1, 0]]}' \
            $step $step "$3" "$2"
        [ $step -eq 0 ] && printf ', '
    done | { printf '{"time_periods": 2, '; cat; printf '}\n'; } > "$1"
}
tennis "$work/tt_degree.json" "[-5, 0.5]" 1
tennis "$work/tt_count.json" "[2, 0.5]" -0.5
tennis "$work/tt_ok.json" "[2, 0.5]" 3
expect 2 'tt_degree.json: $.0.X[0]: degree -5 and transitivity 0.5, expected degree >= 0' "twitter_tennis degree -5" -- \
    "$twofold" info "$work/tt_degree.json"
expect 2 'tt_count.json: $.1.y[0]: -0.5, expected a count >= 0' "twitter_tennis y -0.5" -- "$twofold" info "$work/tt_count.json"
expect 0 "snapshots       2" "twitter_tennis valid" -- "$twofold" info "$work/tt_ok.json"

# --- options that do not apply are refused, not ignored ------------------------------------------------
expect 2 "train: --partition-seed configures --split vertex: add it" "--partition-seed without --split vertex" -- \
    "$twofold" train --model tgcn --data "$D" --epochs 1 --partition-seed 3
expect 2 "train: --blocks places windows in steps; hybrid batches are not windows: drop --blocks" \
    "--blocks with --batching hybrid" -- "$twofold" train --model tgcn --data "$D" --impl opt --batching hybrid --blocks
expect 2 "powerlaw:nodes=10,nodes=20,edges=5,snapshots=3: nodes given twice, expected each parameter once" \
    "a generator key given twice" -- "$twofold" info powerlaw:nodes=10,nodes=20,edges=5,snapshots=3
printf '0 1 0x10\n1 2 20\n2 0 30\n0 2 40\n1 0 50\n' > "$work/hex.txt"
expect 2 'hex.txt:1: field 3 is "0x10", expected a timestamp' "timestamp 0x10" -- "$twofold" info "$work/hex.txt"
# (already refused, kept so: JODIE with TGN's options, --list with a word, schedule --times with --seed)
expect 2 "train: --heads applies to tgn and apan, not jodie" "jodie --heads" -- "$twofold" train --model jodie --data "$E" --heads 2
expect 2 "info: --list lists the bundled datasets and takes nothing else; drop extra" "info --list extra" -- \
    "$twofold" info --list extra
expect 2 "schedule: --seed configures --data: add it" "schedule --times with --seed" -- \
    "$twofold" schedule --times 1,2,3 --ranks 2 --seed 3

# --- messages name their file and give a right hint --------------------------------------------------
expect 2 "events:nodes=2,events=1: 1 events are too few to split 70/15/15" "1 event" -- \
    "$twofold" train --model tgn --data events:nodes=2,events=1 --epochs 1
echo '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": []}' > "$work/fx_empty.json"
expect 2 'fx_empty.json: $.FX: 0 x 0, expected a row per snapshot and a column per vertex' "FX: []" -- \
    "$twofold" info "$work/fx_empty.json"
expect 2 "powerlaw: edges=1 is too dense for 2 present vertices, which hold at most 0 (a quarter of their ordered pairs): give fewer edges or nodes=3 or more" \
    "nodes=2,edges=1" -- "$twofold" info powerlaw:nodes=2,edges=1
expect 0 "vertices" "nodes=3,edges=1 (the hint holds)" -- "$twofold" info powerlaw:nodes=3,edges=1,snapshots=2
expect 2 "option --dump-outputs needs a value (it was empty)" "--dump-outputs ''" -- \
    "$twofold" train --model tgcn --data "$D" --epochs 1 --dump-outputs ''

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
