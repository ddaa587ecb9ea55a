#!/usr/bin/env bash
# The command line's side of a kill during a save (verify/ERRORS.md, Checkpoints;
# test_checkpoint_kill.c kills the library's save at every step): for tgcn and jodie on small data,
#   1. over a complete checkpoint of epoch 1, `train --epochs 2 --load DIR --save DIR` is killed
#      (TWOFOLD_SAVE_FAULT_STEP=k, ref/models/checkpoint.h) in its first file, in its marker, after its
#      marker, between its two renames, after them and while removing DIR.previous; then
#      `train --epochs 3 --load DIR --save DIR` must succeed, say which checkpoint it loaded
#      where it was not DIR itself, write the very bytes of a straight 3-epoch run and leave no
#      DIR.partial or DIR.previous (a leftover NAME.npy.tmpXXXXXX once made every later --save
#      fail with "File exists");
#   2. a first save of tgcn killed the same way: a later --save to the same directory succeeds;
#   3. bad --save targets are refused before training (with --epochs 1000000, training first would
#      not end) and a mismatched --load names what differs, each one line with exit status 2.
#   4. --save onto a symbolic link, a path ending in "." or "..", or a DIR whose DIR.previous holds
#      a user's files is refused before training; a user's checkpoint copy named DIR.previous is
#      the save's to remove (documented);
#   5. two runs saving to one directory at once take turns, and --load reads the result.
# Every run costs a process start (0.1-0.3 s), so the steps are a sample and run in parallel.
# Usage: test_checkpoint_kill.sh TWOFOLD
set -u
export twofold=$1 work
work=$(mktemp -d -p /dev/shm 2> /dev/null || mktemp -d) # memory: no wait for each file's fsync
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
    grep -o "loading the complete checkpoint .*" "$dir.out" | sed 's|.*/|(from |; s|$|) |' | tr -d '\n'
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
    step=${step//$work\//}
    local loaded fallback=0
    [ -e "$dir.partial/trainer.npy" ] || [ ! -e "$dir/trainer.npy" ] && fallback=1
    loaded=$(resume "$model" "$dir") || { echo "FAIL $model k=$k ($step): $loaded"; return 1; }
    [ "$fallback" -eq 0 ] || [[ "$loaded" == *"(from "* ]] ||
        { echo "FAIL $model k=$k ($step): --load did not say it read the complete checkpoint beside $dir"; return 1; }
    echo "ok $model k=$k ($step): ${loaded}-> bitwise equal"
}
# kill_first MODEL K: scenario 2 at step K.
kill_first() {
    local model=$1 k=$2 dir="$work/$1.first$2" args
    read -r -a args < "$work/$model.args"
    TWOFOLD_SAVE_FAULT_STEP=$k "$twofold" "${args[@]}" --epochs 0 --save "$dir" > /dev/null 2> "$dir.err"
    local step
    step=$(sed -n 's/.*fault injected at //p' "$dir.err")
    step=${step//$work\//}
    "$twofold" "${args[@]}" --epochs 3 --save "$dir" > "$dir.out" 2>&1 &&
        same "$dir" "$work/$model.straight" && [ ! -e "$dir.partial" ] ||
        { echo "FAIL $model first save killed at $step, then --save: $(tail -1 "$dir.out")"; return 1; }
    echo "ok $model first save killed at $step: a later --save succeeds, bitwise equal"
}
export -f same resume kill_resave kill_first

echo "train --model tgcn --data chickenpox --hidden 4 --window 4 --train-ratio 0.1" > "$work/tgcn.args"
echo "train --model jodie --data events:nodes=20,events=100 --memory-dim 4 --time-dim 4 --batch 50" \
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
    for k in 2 $((over - 4)) $((over - 3)) $((over - 2)) $((over - 1)) "$over"; do tasks+=("kill_resave $model $k"); done
    [ "$model" = tgcn ] && for k in 1 2 $((first - 2)) $((first - 1)) "$first"; do tasks+=("kill_first $model $k"); done
done
# expect_failure TEXT ARG...: exit status 2 and one stderr line containing TEXT, within 20 s.
failures=0
expect_failure() {
    local expected=$1 error status
    shift
    error=$(timeout 20 "$twofold" "$@" 2>&1 > /dev/null)
    status=$?
    if [ "$status" -ne 2 ] || [ "$(printf '%s\n' "$error" | wc -l)" -ne 1 ] || [[ "$error" != *"$expected"* ]]; then
        echo "FAIL: twofold $*: status $status, expected 2 and one line with '$expected': $error"
        failures=$((failures + 1))
    else
        echo "exit 2 as expected: ${error//$work\//}"
    fi
}
read -r -a tgcn < "$work/tgcn.args"
read -r -a jodie < "$work/jodie.args"
touch "$work/a_file"
mkdir "$work/a_directory" && touch "$work/a_directory/notes.txt"
expect_failure "the directory $work/missing does not exist" "${tgcn[@]}" --epochs 1000000 --save "$work/missing/ckpt"
expect_failure "exists and is not a directory" "${tgcn[@]}" --epochs 1000000 --save "$work/a_file"
expect_failure "exists and is not a twofold checkpoint" "${jodie[@]}" --epochs 1000000 --save "$work/a_directory"
expect_failure "a checkpoint of model tgcn; this run trains gclstm" \
    train --model gclstm --data chickenpox --hidden 4 --window 4 --train-ratio 0.1 --load "$work/tgcn.epoch1"
expect_failure "a checkpoint of model tgcn; this run trains jodie" "${jodie[@]}" --load "$work/tgcn.epoch1"
expect_failure "saved from other data" "${tgcn[@]/chickenpox/pedalme}" --load "$work/tgcn.epoch1"
expect_failure "saved with windows of 4, stride 4; this run has windows of 8, stride 8" \
    "${tgcn[@]}" --window 8 --load "$work/tgcn.epoch1"
expect_failure "saved from other data" "${jodie[@]/events=100/events=120}" --load "$work/jodie.epoch1"
# A trailing slash names the directory itself (it once saved into DIR/.partial inside DIR).
"$twofold" "${tgcn[@]}" --epochs 3 --save "$work/slash/" > /dev/null 2>&1 && same "$work/slash" "$work/tgcn.straight" &&
    [ ! -e "$work/slash/.partial" ] && echo "--save DIR/ saved DIR, bitwise equal to the straight run" ||
    { echo "FAIL: --save DIR/"; failures=$((failures + 1)); }

# Names a save cannot replace, refused before training: a symbolic link (the first save once
# replaced the link by a directory and emptied its target), and a path ending in "." or ".."
# (they passed the check, trained, then failed renaming).
mkdir "$work/real" "$work/e3" && cp "$work/tgcn.epoch1"/* "$work/real"/ && ln -s real "$work/link"
expect_failure "--save $work/link: is a symbolic link, which a save would replace; give the real directory (here" \
    "${tgcn[@]}" --epochs 1000000 --save "$work/link"
same "$work/real" "$work/tgcn.epoch1" && [ -L "$work/link" ] && echo "the link and its target are untouched" ||
    { echo "FAIL: --save LINK changed the link or its target"; failures=$((failures + 1)); }
expect_failure "a path ending in \".\" cannot be replaced by a checkpoint; name the directory itself (here" \
    "${tgcn[@]}" --epochs 1000000 --save "$work/e3/."
expect_failure "a path ending in \"..\" cannot be replaced" "${tgcn[@]}" --epochs 1000000 --save "$work/e3/.."
expect_failure "--save .: a path ending in \".\"" "${tgcn[@]}" --epochs 1000000 --save .
# DIR.partial and DIR.previous are the save's names: a user's notes there are refused before
# training (the save failed after it), a checkpoint copy there is removed by the next save.
mkdir "$work/bk" "$work/bk.previous" && touch "$work/bk.previous/notes.txt"
expect_failure "bk.previous is not a checkpoint's leftover (it is a file or holds other files); a save owns that name" \
    "${tgcn[@]}" --epochs 1000000 --save "$work/bk"
rm "$work/bk.previous/notes.txt" && cp "$work/tgcn.epoch1"/* "$work/bk.previous"/ && cp "$work/tgcn.epoch1"/* "$work/bk"/
"$twofold" "${tgcn[@]}" --epochs 1 --save "$work/bk" > /dev/null 2>&1 && [ ! -e "$work/bk.previous" ] &&
    echo "a checkpoint copy in bk.previous is removed by the next save of bk (as documented)" ||
    { echo "FAIL: --save bk with a checkpoint copy in bk.previous"; failures=$((failures + 1)); }
# Two runs saving to one directory at once take turns (an flock on its parent): both succeed, and
# DIR is a complete checkpoint, bitwise the one both wrote, that --load reads. Each save step is
# slowed (TWOFOLD_SAVE_STEP_DELAY_MS, ref/models/checkpoint.h) so that the two saves surely overlap;
# without the lock each removed the other's DIR.partial and they failed or left a marker alone.
for try in 1 2 3; do
    dir="$work/race$try"
    [ "$try" -eq 3 ] && cp -r "$work/tgcn.epoch1" "$dir" # over an existing checkpoint too
    started_race=$(date +%s%N)
    TWOFOLD_SAVE_STEP_DELAY_MS=10 "$twofold" "${tgcn[@]}" --epochs 1 --save "$dir" > "$dir.a" 2>&1 &
    first_pid=$!
    TWOFOLD_SAVE_STEP_DELAY_MS=10 "$twofold" "${tgcn[@]}" --epochs 1 --save "$dir" > "$dir.b" 2>&1 &
    second_pid=$!
    wait "$first_pid"; first_status=$?
    wait "$second_pid"; second_status=$?
    race_ms=$(( ($(date +%s%N) - started_race) / 1000000 ))
    if [ "$first_status" -eq 0 ] && [ "$second_status" -eq 0 ] && same "$dir" "$work/tgcn.epoch1" &&
        [ ! -e "$dir.partial" ] && [ ! -e "$dir.previous" ] &&
        "$twofold" "${tgcn[@]}" --epochs 1 --load "$dir" > "$dir.load" 2>&1; then
        echo "concurrent saves, try $try: both exit 0 in $race_ms ms, --load reads DIR, bitwise the epoch-1 checkpoint"
    else
        echo "FAIL: concurrent saves, try $try: exit $first_status and $second_status," \
             "$(ls "$dir" 2> /dev/null | wc -l) files: $(tail -qn1 "$dir.a" "$dir.b" "$dir.load" 2> /dev/null | tr '\n' ' ')"
        failures=$((failures + 1))
    fi
done

printf '%s\n' "${tasks[@]}" | xargs -P "$jobs" -I{} bash -c '{}' 2> /dev/null | sort -V > "$work/results"
cat "$work/results"
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
passed=$(grep -c '^ok ' "$work/results")
echo "$passed of ${#tasks[@]} kills recovered from in $((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s" \
     "on $jobs process(es)"
[ "$passed" -eq "${#tasks[@]}" ] && [ "$failures" -eq 0 ] || { echo "FAILED"; exit 1; }
