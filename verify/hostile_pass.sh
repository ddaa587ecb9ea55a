#!/usr/bin/env bash
# A hostile pass over what the reliability work changed (verify/ERRORS.md, "Writes and reads" and
# "Ranks, verify and options"): writers, readers, the ranks' agreement, --memory-limit, verify's
# verdicts and option refusals; and (section 8) the models and options merged after that pass:
# --task, --layers, --heads, --mails, --memory-update, their checkpoints and their ranks. Not a
# ctest test (a few minutes); run it after such changes:
#   verify/hostile_pass.sh build/twofold [mpiexec]
# Every input must end within its time limit, by exit status (never a signal), with at most one
# `twofold: error` line and no MPI_ABORT page; bad input exits 2, a failing machine 3, and an
# output path that holds a FIFO, device, symbolic link or directory is left as it was. It prints a
# line per finding and the counts by kind at the end; exit status 1 when something was found.
# Never point it at system paths: the devices it offers as outputs are its own nodes.
set -u
twofold=$(realpath "$1") mpiexec=${2:-mpiexec}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
declare -A count
findings=0
finding() { echo "FINDING: $*"; findings=$((findings + 1)); }

# run KIND LIMIT ALLOWED -- COMMAND...: one input; ALLOWED is a list of exit statuses ("2 3").
run() {
    local kind=$1 limit=$2 allowed=$3
    shift 4
    count[$kind]=$(( ${count[$kind]:-0} + 1 ))
    timeout -k 5 "$limit" "$@" > out 2> err < /dev/null
    local got=$?
    last=$got
    local errors=$(grep -c 'twofold: error' err)
    if [ "$got" -eq 124 ] || [ "$got" -eq 137 ]; then
        finding "$kind: no end within $limit s: $*"
    elif [ "$got" -gt 128 ]; then
        finding "$kind: signal $((got - 128)): $* :: $(head -c 200 err)"
    elif ! [[ " $allowed " == *" $got "* ]]; then
        finding "$kind: exit $got, expected one of ($allowed): $* :: $(head -c 300 err)"
    elif [ "$errors" -gt 1 ]; then
        finding "$kind: $errors error lines: $*"
    elif grep -q MPI_ABORT err; then
        finding "$kind: MPI_ABORT page: $*"
    fi
}

D=powerlaw:nodes=50,edges=200,snapshots=8
E=events:nodes=20,events=200

# --- 1. bad files as --data ------------------------------------------------------------------------
printf '{"edges": [[0, 0]], "FX": [[1]' > trunc.json
printf '\x00\x01\x02garbage' > garbage.json
: > empty.json
printf '{"edges": [[0, 1]], "node_ids": {"A": 0, "B": 1}, "FX": [[1, 2], [3]]}' > ragged.json
printf '{"edges": [[0, 5]], "node_ids": {"A": 0}, "FX": [[1], [2], [3]]}' > range.json
printf '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[1e39], [2], [3]]}' > huge.json
printf '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[NaN], [2], [3]]}' > nan.json
printf 'from,to,time\n0,1,5\n1,0,4\n' > backwards.csv
printf 'from,to,time\n0,1,x\n' > badtime.csv
printf 'a b c\n' | gzip > text.json.gz
head -c 100 /dev/urandom | gzip | head -c 30 > cut.json.gz
mkfifo fifo.json
mkdir dir.json
ln -s dir.json link_to_dir.json
ln -s loop.json loop.json
ln -s /nonexistent/file.json dangling.json
for f in trunc.json garbage.json empty.json ragged.json range.json huge.json nan.json backwards.csv badtime.csv \
         text.json.gz cut.json.gz fifo.json dir.json link_to_dir.json loop.json dangling.json /nonexistent/x.json; do
    run data 20 "2" -- "$twofold" info "$f"
    run data 20 "2" -- "$twofold" train --model tgcn --epochs 1 --data "$f"
done

# --- 2. corrupted .npy files as --edge-features and --placement -----------------------------------
python3 - <<'EOF'
import random, struct
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (200, 2), }"
header += " " * (118 - len(header)) + "\n"
good = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\x00" * (200 * 2 * 4)
open("good.npy", "wb").write(good)
r = random.Random(7)
for k in range(120):
    b = bytearray(good)
    for _ in range(r.choice([1, 2, 4, 8])):
        i = r.randrange(0, 128 if r.random() < 0.8 else len(b))
        b[i] = r.randrange(256)
    if r.random() < 0.2:
        b = b[: r.randrange(len(b))]
    open(f"bad{k:03d}.npy", "wb").write(bytes(b))
EOF
for f in bad*.npy; do
    run npy 30 "0 2" -- "$twofold" train --model tgn --epochs 1 --data "$E" --edge-features "$f"
done
mkfifo fifo.npy
mknod chardev.npy c 1 3 2> /dev/null || : # this pass's own node (as root), never the system's
for f in fifo.npy chardev.npy dir.json dangling.json; do
    run npy 20 "2" -- "$twofold" train --model tgn --epochs 1 --data "$E" --edge-features "$f"
    run npy 20 "2" -- "$twofold" train --model tgn --impl opt --epochs 1 --data "$E" --placement "file:$f"
done

# --- 3. output paths: what is there is kept --------------------------------------------------------
mkdir ro && chmod 555 ro
echo keep > regular_ro.npy && chmod 444 regular_ro.npy
mkfifo out_fifo
mknod out_dev c 1 3 2> /dev/null || mkfifo out_dev
ln -s good.npy out_link
mkdir out_dir
outputs="out_fifo out_dev out_link out_dir /nonexistent/x.npy ./ . out_dir/.. out_dir/"
[ "$(id -u)" -eq 0 ] || outputs="$outputs ro/x.npy ro" # root writes into a read-only directory
for o in $outputs; do
    before=$(stat -c '%F %i' "$o" 2> /dev/null)
    run output 30 "2 3" -- "$twofold" partition --data "$D" --ranks 2 --method hash --save "$o"
    # --dump-outputs names a directory (it writes DIR/predictions.npy): an existing one is taken
    case "$o" in out_dir | out_dir/ | . | ./ | out_dir/..) ok="0" ;; *) ok="2 3" ;; esac
    run output 30 "$ok" -- "$twofold" train --model tgcn --epochs 1 --data "$D" --dump-outputs "$o"
    run output 30 "2 3" -- "$twofold" schedule --times 1,2,3 --ranks 2 --gantt "$o"
    run output 30 "2 3" -- "$twofold" export --data "$D" --out "$o"
    after=$(stat -c '%F %i' "$o" 2> /dev/null)
    [ "$before" = "$after" ] || finding "output: $o changed from '$before' to '$after'"
done
[ "$(cat good.npy | head -c 6 | tail -c 5)" = "NUMPY" ] || finding "output: the target of out_link was replaced"

# --- 4. bad option values --------------------------------------------------------------------------
for option in --lr --epochs --window --stride --batch --hidden --seed --train-ratio; do
    for value in -1 0 1e400 nan inf 0x10 " 1" "" abc 1e18 -0 1.5.2; do
        run option 30 "0 2" -- "$twofold" train --model tgcn --epochs 1 --data "$D" "$option" "$value"
    done
done
for value in 0 0.5 1 1K -1M 1e3M 8Q "" 0x100000; do
    run option 20 "0 2" -- "$twofold" --memory-limit "$value" info "$D"
done

# --- 5. ranks that disagree (2 ranks) --------------------------------------------------------------
if command -v "$mpiexec" > /dev/null; then
    m() { run ranks 60 "$1" -- "$mpiexec" --oversubscribe "${@:2}"; }
    m 2 -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D" --lr 0.01 : -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D" --lr 0.02
    m 2 -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D" : -n 1 "$twofold" train --impl opt --model tgcn --epochs 2 --data "$D"
    m 2 -n 1 "$twofold" info "$D" : -n 1 "$twofold" export --data "$D" --out x
    m 2 -n 1 "$twofold" partition --data "$D" --ranks 2 : -n 1 "$twofold" verify --data "$D"
    m 2 -n 1 "$twofold" --memory-limit 1G train --impl opt --model tgcn --epochs 1 --data "$D" : -n 1 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D"
    m 2 -n 1 "$twofold" verify train --data "$D" : -n 1 "$twofold" verify schedule --data "$D"
    m 2 -n 1 "$twofold" train --impl opt --model tgn --epochs 1 --data "$E" --edge-features good.npy : -n 1 "$twofold" train --impl opt --model tgn --epochs 1 --data "$E" --edge-features bad000.npy
    m 2 -n 1 "$twofold" --help : -n 1 "$twofold" train --impl opt --data "$D"
    m 2 -n 2 "$twofold" info /nonexistent/x.json
    m 2 -n 2 "$twofold" export --data "$D" --out y
    m 2 -n 2 "$twofold" partition --data "$D" --ranks 2 --save out_fifo
    m 2 -n 2 "$twofold" train --impl opt --model tgcn --epochs 1 --data "$D" --dump-outputs /nonexistent/d
    m 2 -n 2 "$twofold" --memory-limit 56M train --impl opt --model tgcn --epochs 2 --hidden 64 --data powerlaw:nodes=20000,edges=100000,snapshots=10
    m 2 -n 2 "$twofold" train --impl opt --model tgcn --epochs 1 --schedule greedy --window 2 --stride 1 --data powerlaw:nodes=10,edges=10,snapshots=6000
fi

# --- 6. kills during checkpoint saves --------------------------------------------------------------
for k in $(seq 1 20); do
    rm -rf ck ck.partial ck.previous
    "$twofold" train --model tgcn --epochs 1 --data "$D" --save ck > /dev/null 2>&1
    "$twofold" train --model tgcn --epochs 40 --data "$D" --load ck --save ck > /dev/null 2>&1 &
    pid=$!
    sleep "0.$(( (k * 37) % 10 ))$(( k % 10 ))"
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
    run kill 60 "0" -- "$twofold" train --model tgcn --epochs 41 --data "$D" --load ck --save ck
done

# --- 7. verify on one-vertex graphs with features up to +-100: never WRONG -------------------------
for seed in $(seq 100 119); do
    python3 -c "
import json, random
r = random.Random($seed)
scale = r.choice([1, 10, 100, 300])
json.dump({'edges': [[0, 0]], 'node_ids': {'A': 0}, 'FX': [[round(r.gauss(0, scale), 3)] for _ in range(12)]}, open('v.json', 'w'))"
    run verify 120 "0" -- "$twofold" verify train schedule --data v.json
done

# --- 8. what the models and options merged since then take --------------------------------------
# --memory-update, --mails, --task, --layers, --heads on every model they apply to or not; tiny
# data (one vertex, no edges); verify's model x technique matrix; checkpoints of these models
# resumed with other options, cut or damaged; ranks given other values of these options.
printf '{"edges": [[0, 0]], "node_ids": {"A": 0}, "FX": [[1], [2], [3], [4], [5], [6], [7], [8], [9], [10]]}' > one.json
N=powerlaw:nodes=5,edges=0,snapshots=10
nan_link=""
for model in tgcn gatlstm dcrnn cdgcn wdgcn mpnnlstm tgcn2 gcrnm1 gconvlstm; do
    for data in "$D" one.json "$N"; do
        run models 60 "0 2" -- "$twofold" train --model "$model" --epochs 1 --data "$data"
        # link prediction needs edges to score: data without any gives no AP (2), never "AP nan" (0)
        run models 60 "0 2" -- "$twofold" train --model "$model" --epochs 1 --data "$data" --task link
        [ "$data" = "$D" ] || ! grep -q 'AP nan' out || nan_link="$nan_link $model/$data"
    done
    for option in "--layers 0" "--layers 17" "--layers 3" "--heads 0" "--heads 3" "--mails 2" "--memory-update vertex" \
                  "--task classify" "--task" "--layers"; do
        # shellcheck disable=SC2086 # the option and its value are two words
        run models 30 "0 2" -- "$twofold" train --model "$model" --epochs 1 --data "$D" $option
        grep -q 'JODIE\|TGN' err && finding "models: $model $option: a reason about another model: $(head -c 200 err)"
    done
done
[ -z "$nan_link" ] || finding "models: --task link without edges to score trains on nothing: 'AP nan', exit 0 ($(wc -w <<< "$nan_link") runs:$nan_link)"
for model in tgn jodie apan; do
    for option in "--memory-update entry" "--memory-update vertex" "--memory-update both" "--mails 0" "--mails 1" \
                  "--mails 1025" "--mails 3" "--heads 0" "--heads 3" "--heads 4" "--layers 2" "--task link"; do
        # shellcheck disable=SC2086
        run models 60 "0 2" -- "$twofold" train --model "$model" --epochs 1 --data "$E" $option
    done
    run models 60 "0 2" -- "$twofold" train --model "$model" --epochs 1 --data events:nodes=2,events=20
done
# checkpoints of these models: resumed with other options (each must be refused or be the same run), cut
# files, other files in their place; --task and --mails are written down separately below
ck_case() { # MODEL DATA OPTIONS-AT-SAVE -- OPTIONS-AT-RESUME...
    local model=$1 data=$2 saved=$3
    shift 4
    rm -rf ck8 && "$twofold" train --model "$model" --epochs 1 --data "$data" $saved --save ck8 > /dev/null 2>&1
    for resume in "$@"; do
        # shellcheck disable=SC2086
        run checkpoint 60 "2" -- "$twofold" train --model "$model" --epochs 2 --data "$data" --load ck8 $resume
    done
    for f in $(ls ck8 | head -3) trainer.npy; do
        rm -rf ck9 && cp -r ck8 ck9 && head -c 90 "ck8/$f" > "ck9/$f"
        run checkpoint 60 "2" -- "$twofold" train --model "$model" --epochs 2 --data "$data" --load ck9
        rm -rf ck9 && cp -r ck8 ck9 && printf 'garbage' > "ck9/$f"
        run checkpoint 60 "2" -- "$twofold" train --model "$model" --epochs 2 --data "$data" --load ck9
    done
}
ck_case cdgcn "$D" "" -- "--layers 3" "--layers 1" "--hidden 16" "--window 2"
ck_case gcrnm1 "$D" "--layers 3" -- "--layers 2" "--k 3"
ck_case gatlstm "$D" "" -- "--hidden 16" "--model dcrnn"
ck_case dcrnn "$D" "" -- "--k 3"
ck_case tgn "$E" "" -- "--heads 4" "--memory-update vertex" "--embedding-dim 16" "--model apan"
ck_case apan "$E" "" -- "--heads 4" "--memory-dim 16" "--model tgn"
# (found: a checkpoint resumes under another --task, and APAN's under another --mails, without a word)
for resumed in "gatlstm $D --task link" "apan $E --mails 4"; do
    read -r model data resume <<< "$resumed"
    rm -rf ck8 && "$twofold" train --model "$model" --epochs 1 --data "$data" --save ck8 > /dev/null 2>&1
    # shellcheck disable=SC2086
    run checkpoint 60 "0 2" -- "$twofold" train --model "$model" --epochs 2 --data "$data" --load ck8 $resume
    [ "$last" -eq 0 ] && finding "checkpoint: $model resumed under $resume: taken without a word"
done
# ranks given other values of the new options (2 ranks)
if command -v "$mpiexec" > /dev/null; then
    for pair in "cdgcn:--layers 3" "tgn:--heads 4" "tgn:--memory-update vertex" "apan:--mails 3" "gatlstm:--task link" \
                "gatlstm:--model dcrnn"; do
        model=${pair%%:*} other=${pair#*:}
        data=$D
        case $model in tgn | apan) data=$E ;; esac
        # shellcheck disable=SC2086
        m 2 -n 1 "$twofold" train --impl opt --model "$model" --epochs 1 --data "$data" : \
            -n 1 "$twofold" train --impl opt --model "$model" --epochs 1 --data "$data" $other
    done
    m 0 -n 2 "$twofold" train --impl opt --model gatlstm --epochs 1 --data "$D" --task link --batch 2
    m "0 2" -n 2 "$twofold" train --impl opt --model apan --epochs 1 --data "$E"
fi
# verify's model x technique matrix: tiny data, and a spoiled train twin that must be WRONG (exit 1)
for data in one.json "$N" "$D"; do
    run verify 300 "0" -- "$twofold" verify train schedule --data "$data"
done
run verify 120 "1" -- env TWOFOLD_BREAK_TWIN=train "$twofold" verify train --data v.json
grep -qE 'equal logic, rounding amplified [0-9]|not comparable:' out && finding "verify: a spoiled train twin not WRONG"

total=0
for kind in "${!count[@]}"; do
    printf '%-8s %4d inputs\n' "$kind" "${count[$kind]}"
    total=$((total + count[$kind]))
done
echo "hostile pass: $total inputs, $findings finding(s)"
[ "$findings" -eq 0 ]
