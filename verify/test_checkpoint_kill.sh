#!/usr/bin/env bash
# A kill at any instant of a save leaves a checkpoint that --load finds, and the run resumed from
# it ends bit for bit where an uninterrupted run ends (issue 16, point 2). For a snapshot model
# (tgcn) and an event model (jodie), on small data:
#   1. over a complete checkpoint of epoch 1, a run to epoch 2 is killed at every step k of its
#      save (TWOFOLD_SAVE_FAULT_STEP=k, ref/checkpoint.h); a run to epoch 3 with --load and --save
#      on the same directory must then succeed and write the very bytes of a straight 3-epoch run,
#      leaving no DIR.partial or DIR.previous. Where the killed state needs recovery, the recovery
#      itself is killed at each of its steps too, and resumed from in turn;
#      A kill while a file is written leaves DIR.partial/NAME.npy.tmpXXXXXX, which once made every
#      later --save fail ("File exists"): the resumed run's --save shows it no longer does;
#   2. a first save (no earlier checkpoint) of tgcn is killed when it has created DIR.partial, in
#      its first file, in its marker, after its marker and after its rename: a later --save to the
#      same directory must succeed. (Its other steps leave the same states as scenario 1's; every
#      run costs a process start, about 0.1-0.3 s, and the test should stay well under a minute.)
# The steps run in parallel, one working directory each. Usage: test_checkpoint_kill.sh TWOFOLD
set -u
export twofold=$1 work
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)

# same A B: A and B hold the same file names with the same bytes.
same() {
    [ "$(cd "$1" && ls)" = "$(cd "$2" && ls)" ] || return 1
    for file in "$1"/*; do cmp -s "$file" "$2/${file##*/}" || return 1; done
}
# resume MODEL DIR: train to epoch 3 from DIR, saving over it; it must equal the straight run.
resume() {
    local model=$1 dir=$2 args
    read -r -a args < "$work/$model.args"
    "$twofold" "${args[@]}" --epochs 3 --load "$dir" --save "$dir" > "$dir.out" 2>&1 || {
        echo "resume from $dir failed:"; tail -3 "$dir.out"; return 1; }
    same "$dir" "$work/$model.straight" || { echo "resume from $dir differs from the straight run"; return 1; }
    [ ! -e "$dir.partial" ] && [ ! -e "$dir.previous" ] || { echo "resume from $dir left $(ls -d "$dir".*)"; return 1; }
    grep -o "resuming after epoch [0-9]" "$dir.out" | tr '\n' ' '
}
# kill_resave MODEL K: scenario 1 at step K. Prints one line: the step, what was loaded.
kill_resave() {
    local model=$1 k=$2 dir="$work/$1.k$2" args status
    read -r -a args < "$work/$model.args"
    cp -r "$work/$model.epoch1" "$dir"
    TWOFOLD_SAVE_FAULT_STEP=$k "$twofold" "${args[@]}" --epochs 2 --load "$dir" --save "$dir" > /dev/null 2> "$dir.err"
    status=$?
    [ "$status" -eq 137 ] || { echo "FAIL $model k=$k: status $status, not killed: $(cat "$dir.err")"; return 1; }
    local step
    step=$(sed -n 's/.*fault injected at //p' "$dir.err")
    # A state that needs recovery: kill the recovery at each of its steps (those before the
    # save creates its new DIR.partial), then resume.
    if [ -e "$dir.previous" ] || [ -e "$dir.partial/trainer.npy" ] || [ ! -e "$dir/trainer.npy" ]; then
        local j=1 nested
        while :; do
            nested="$dir.j$j"
            rm -rf "$nested" "$nested".*
            for suffix in "" .partial .previous; do [ -e "$dir$suffix" ] && cp -r "$dir$suffix" "$nested$suffix"; done
            TWOFOLD_SAVE_FAULT_STEP=$j "$twofold" "${args[@]}" --epochs 2 --load "$nested" --save "$nested" \
                > /dev/null 2> "$nested.err"
            grep -q "fault injected" "$nested.err" && ! grep -q "created $nested.partial" "$nested.err" || break
            resume "$model" "$nested" > /dev/null || { echo "FAIL $model k=$k, recovery killed at step $j"; return 1; }
            j=$((j + 1))
        done
        step="$step; recovery killed at each of its $((j - 1)) step(s)"
    fi
    local loaded
    loaded=$(resume "$model" "$dir") || { echo "FAIL $model k=$k ($step): $loaded"; return 1; }
    echo "ok $model k=$k ($step): ${loaded}-> bitwise equal"
}
# kill_first MODEL K: scenario 2 at step K.
kill_first() {
    local model=$1 k=$2 dir="$work/$1.first$2" args
    read -r -a args < "$work/$model.args"
    TWOFOLD_SAVE_FAULT_STEP=$k "$twofold" "${args[@]}" --epochs 0 --save "$dir" > /dev/null 2> "$dir.err"
    local step
    step=$(sed -n 's/.*fault injected at //p' "$dir.err")
    "$twofold" "${args[@]}" --epochs 3 --save "$dir" > "$dir.out" 2>&1 &&
        same "$dir" "$work/$model.straight" && [ ! -e "$dir.partial" ] ||
        { echo "FAIL $model first save killed at $step, then --save: $(tail -1 "$dir.out")"; return 1; }
    echo "ok $model first save killed at $step: a later --save succeeds, bitwise equal"
}
export -f same resume kill_resave kill_first

echo "train --model tgcn --data chickenpox --hidden 4 --window 4 --train-ratio 0.1" > "$work/tgcn.args"
echo "train --model jodie --data events:nodes=20,events=100 --memory-dim 4 --time-dim 4 --embedding-dim 4 --batch 50" \
    > "$work/jodie.args"
started=$(date +%s%N)
tasks=()
for model in tgcn jodie; do
    read -r -a args < "$work/$model.args"
    "$twofold" "${args[@]}" --epochs 3 --save "$work/$model.straight" > /dev/null &&
        "$twofold" "${args[@]}" --epochs 1 --save "$work/$model.epoch1" > /dev/null || { echo "FAIL: $model"; exit 1; }
    # How many steps a save over a checkpoint takes, and a first save (no earlier checkpoint).
    cp -r "$work/$model.epoch1" "$work/$model.count"
    over=$(TWOFOLD_SAVE_FAULT_STEP=-1 "$twofold" "${args[@]}" --epochs 2 --load "$work/$model.count" \
               --save "$work/$model.count" 2>&1 >/dev/null | sed -n 's/.*this save took \([0-9]*\) steps/\1/p')
    first=$(TWOFOLD_SAVE_FAULT_STEP=-1 "$twofold" "${args[@]}" --epochs 0 --save "$work/$model.fresh" 2>&1 \
               >/dev/null | sed -n 's/.*this save took \([0-9]*\) steps/\1/p')
    [ -n "$over" ] && [ -n "$first" ] || { echo "FAIL: no step count for $model"; exit 1; }
    echo "$model: a save over a checkpoint takes $over steps, a first save $first"
    for k in $(seq "$over"); do tasks+=("kill_resave $model $k"); done
    [ "$model" = tgcn ] && for k in 1 2 $((first - 2)) $((first - 1)) "$first"; do tasks+=("kill_first $model $k"); done
done
printf '%s\n' "${tasks[@]}" | xargs -P "$jobs" -I{} bash -c '{}' 2> /dev/null | sort -V > "$work/results"
cat "$work/results"
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
passed=$(grep -c '^ok ' "$work/results")
echo "$passed of ${#tasks[@]} kills recovered from ($(grep -c '^ok .*recovery killed' "$work/results") with the" \
     "recovery killed at every step as well) in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s" \
     "on $jobs process(es)"
[ "$passed" -eq "${#tasks[@]}" ] || { echo "FAILED"; exit 1; }
