#!/usr/bin/env bash
# Epoch time of snapshot-model training: the reference, the optimized twin on 1 and 2 MPI ranks,
# and (when it is installed) PyTorch Geometric Temporal on the same model, data and initial
# parameters, in one run on this machine, with ratios.
#
#   bench/train.sh [MODEL [DATA [EPOCHS]]]        (default: tgcn twitter_tennis 5)
#
# MODEL is any snapshot model of the model table (`twofold train --help` lists them); the peer runs
# on those PyTorch Geometric Temporal also has (the others get twofold's rows only). DATA is anything
# `twofold train --data` takes (a bundled name, a file, a generator spec). Settings: hidden 32, windows of 8 snapshots, 4 windows
# per Adam step (so two ranks each run two), lr 0.01, train ratio 0.8, twofold's seed 1. The
# program is TWOFOLD (default build/twofold).
#
# Threads: THREADS (default 1) on both sides: OMP_NUM_THREADS for each twofold rank, --threads
# (torch.set_num_threads) for the peer; the table prints what each side reported using.
#
# The peer: `twofold export` writes DATA's arrays to the run directory and `twofold train
# --epochs 0 --save` its initial parameters; bench/peer/peer_train_time.py trains on exactly those.
# It runs when PYTHON (default python3) can import torch_geometric_temporal with bench/peer/shim
# on PYTHONPATH (bench/peer/README.md says how to install it); else twofold's rows alone.
#
# Order: every run first, then validation, then times. The twins must end at the reference's test
# MSE within 1e-4 relative (the same arithmetic up to summation order), and so must the peer
# (PEER_TOLERANCE, default 1e-4: the same model from the same parameters on the same arrays; what
# was measured is in bench/peer/README.md). Two runs equal within fp can still part after a while:
# a hidden state within a few ulps of the head's ReLU kink lands on opposite sides in the two, and
# Adam spreads that one gradient's jump into every parameter (bench/results/01-models/notes.md). A
# run whose final test MSE is off its tolerance is therefore validated on its first epoch instead
# when that epoch's test MSE is within the fp tolerance 1e-5 of the reference's and its final one
# nearer the reference's than the reference's own last epoch moved it: the line says so and prints
# both differences. A run that fails, or a result off both, ends the script with exit 1 before
# any time is printed.
#
# Times: the median and the spread (min..max) of epochs 2..EPOCHS (the first includes warm-up),
# so EPOCHS >= 4 gives at least three timed epochs. Epoch lines have millisecond resolution, so no
# ratio is printed from a median under 10 ms (use larger data). Logs stay in a fresh directory under
# ${TMPDIR:-/tmp} (printed); the exported data and parameters there are removed at the end.
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
die() { echo "bench/train.sh: $*" >&2; exit 1; }

model=${1-tgcn}
data=${2-twitter_tennis}
epochs=${3-5}
threads=${THREADS:-1}
peer_tolerance=${PEER_TOLERANCE:-1e-4}
twofold=${TWOFOLD:-build/twofold}
python=${PYTHON:-python3}
# Paths the caller gave are relative to the caller's directory; the script runs in the repository's.
[ -e "$data" ] && data=$(realpath "$data")
[ -n "${TWOFOLD:-}" ] && [ -e "$twofold" ] && twofold=$(realpath "$twofold")
[[ $python == */* ]] && [ -e "$python" ] && python=$(realpath -s "$python")
cd "$(dirname "$0")/.."

[ -x "$twofold" ] || die "$twofold is not an executable: build twofold first (README.md), or set TWOFOLD"
# The snapshot models, one per line with its summary, as `twofold train --help` prints the model table;
# a line ending "not in PyG Temporal" is a model the peer does not have.
models=$("$twofold" train --help | awk '/^  --model M/ { on = 1; sub(/^  --model M/, "") }
  on && /^ +\(chapter 01\)/ { on = 0 }
  on { sub(/^ +/, ""); print }')
model_line=$(awk -v m="$model" '$1 == m' <<< "$models")
[ -n "$model_line" ] || die "MODEL $model: expected one of $(awk '{ print $1 }' <<< "$models" | paste -sd ' ')"
has_peer=1
if [[ $model_line == *"not in PyG Temporal" ]]; then has_peer=0; fi
[ -n "$data" ] || die "DATA is empty: expected a bundled name, a file or a generator spec"
[[ $epochs =~ ^[0-9]+$ ]] || die "EPOCHS \"$epochs\": expected a whole number (at least 4)"
((10#$epochs >= 4)) ||
  die "EPOCHS $epochs: at least 4, since epoch 1 (warm-up) is not timed and the median and spread need at least 3 timed epochs"
epochs=$((10#$epochs))
[[ $threads =~ ^[1-9][0-9]*$ ]] || die "THREADS \"$threads\": expected a whole number >= 1"
awk -v x="$peer_tolerance" 'BEGIN { exit !(x ~ /^[0-9.]+([eE][-+]?[0-9]+)?$/ && x + 0 > 0) }' ||
  die "PEER_TOLERANCE \"$peer_tolerance\": expected a positive number such as 1e-4"

cores=$(getconf _NPROCESSORS_ONLN) # not nproc, which reports OMP_NUM_THREADS when it is set
runs=$(mktemp -d "${TMPDIR:-/tmp}/twofold-train-bench.XXXXXX")
trap 'rm -rf "$runs/data" "$runs/data.partial" "$runs/init"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=$threads
width=(--hidden 32)
[ "$model" = evolvegcn ] && width=() # EvolveGCN-O's state is as wide as the features: no --hidden
shared=(--model "$model" "${width[@]}" --window 8 --batch 4 --lr 0.01 --train-ratio 0.8)
settings=("${shared[@]}" --data "$data" --epochs "$epochs")

echo "bench/train.sh: $model on $data, $epochs epochs, $threads thread(s) per twofold rank and for the peer"
. bench/race_common.sh # run, run_twins, epoch_times, median_of, ratio
echo "machine: $cores cores ($(lscpu | sed -n 's/^Model name: *//p')); logs in $runs"

# 1. Every run, before anything is judged or timed.
run_twins "${settings[@]}"
if [ "$has_peer" = 0 ]; then
  echo "peer: PyTorch Geometric Temporal has no $model; twofold's rows only"
elif PYTHONPATH=bench/peer/shim "$python" -c "import torch_geometric_temporal" > /dev/null 2>&1; then
  run export "$twofold" export --data "$data" --out "$runs/data"
  run initial-parameters "$twofold" train "${shared[@]}" --data "$data" --epochs 0 --save "$runs/init"
  run peer env PYTHONPATH=bench/peer/shim "$python" -W ignore bench/peer/peer_train_time.py "${shared[@]}" \
      --epochs "$epochs" --data-dir "$runs/data" --init "$runs/init" --threads "$threads"
  labels+=(peer)
else
  echo "peer: PyTorch Geometric Temporal is not importable by $python (bench/peer/README.md installs it); twofold's rows only"
fi

[ "${labels[-1]}" = peer ] && head -n 1 "$runs/peer.log"

# 2. Validation: every run ends where the reference ends.
final_mse() { awk '/^final test MSE/ { print $4 }' "$runs/$1.log"; }
# epoch_mse LABEL E: the test MSE of LABEL's epoch line E ("epoch E train loss L test MSE M (T s)").
epoch_mse() { awk -v e="$2" '$1 == "epoch" && $2 == e && $6 == "test" { print $8; exit }' "$runs/$1.log"; }
# within LABEL TOLERANCE [E]: prints the relative difference of LABEL's final test MSE (or epoch
# E's) from the reference's; exit status 0 when it is within TOLERANCE (relative to max(1, |reference|)).
within() {
  local a b
  if [ $# -eq 3 ]; then a=$(epoch_mse "$1" "$3") b=$(epoch_mse ref "$3"); else a=$(final_mse "$1") b=$(final_mse ref); fi
  awk -v a="$a" -v b="$b" -v tolerance="$2" 'BEGIN {
    if (a == "" || b == "") { print "no test MSE"; exit 1 }
    d = a - b; if (d < 0) d = -d; scale = b < 0 ? -b : b; if (scale < 1) scale = 1
    printf "%.2g", d / scale; exit !(d <= tolerance * scale) }'
}
# closer_than_last_epoch LABEL: exit status 0 when LABEL's final test MSE is nearer the reference's
# than the reference's own last epoch moved it (|final - epoch E-1|): two runs that parted by
# chance still trained alike.
closer_than_last_epoch() {
  awk -v a="$(final_mse "$1")" -v b="$(final_mse ref)" -v before="$(epoch_mse ref $((epochs - 1)))" 'BEGIN {
    d = a - b; if (d < 0) d = -d; moved = b - before; if (moved < 0) moved = -moved
    exit !(a != "" && before != "" && d < moved) }'
}
for label in "${labels[@]:1}"; do
  first=
  tolerance=1e-4
  [ "$label" = peer ] && tolerance=$peer_tolerance
  if difference=$(within "$label" "$tolerance"); then
    echo "validated: $label ends at test MSE $(final_mse "$label"), the reference at $(final_mse ref)" \
         "(relative difference $difference <= $tolerance)"
  elif first=$(within "$label" 1e-5 1) && closer_than_last_epoch "$label"; then
    echo "validated on epoch 1: $label's test MSE $(epoch_mse "$label" 1), the reference's $(epoch_mse ref 1)" \
         "(relative difference $first <= 1e-5); it ends at $(final_mse "$label"), the reference at $(final_mse ref)" \
         "(relative difference $difference > $tolerance: parted after epoch 1, by less than the reference's last epoch moved it)"
  else
    echo "FAILED validation: $label ends at test MSE $(final_mse "$label"), the reference at $(final_mse ref)" \
         "(relative difference $difference > $tolerance; epoch 1's relative difference ${first:-?}, over 1e-5," \
         "or the end further off than the reference's last epoch moved it): no times reported; logs in $runs"
    exit 1
  fi
done

# 3. Times: median and spread of epochs 2..E, from the epoch lines every run prints alike.
# threads_of LABEL: what the run reported using.
threads_of() {
  case $1 in
    ref) echo "1 thread" ;;
    peer) sed -n 's/^peer: torch [^,]*, \([0-9]*\) thread.*/\1 thread(s)/p' "$runs/peer.log" ;;
    *) sed -n 's/^impl opt: \([0-9]*\) rank(s), \([0-9]*\) thread(s) per rank.*/\1 rank(s) x \2 thread(s)/p' "$runs/$1.log" ;;
  esac
}
printf '%-12s %-24s %10s %21s %15s\n' run threads "median s" "spread (min..max) s" "final test MSE"
for label in "${labels[@]}"; do
  read -r median low high < <(epoch_times "$label")
  printf '%-12s %-24s %10s %21s %15s\n' "$label" "$(threads_of "$label")" "$median" "$low..$high" "$(final_mse "$label")"
done
echo "speedup over ref (medians): opt 1 rank $(ratio ref opt-1-rank), opt 2 ranks $(ratio ref opt-2-ranks)"
if [ "${labels[-1]}" = peer ]; then
  echo "speedup over PyTorch Geometric Temporal (medians, same CPU, $threads thread(s) each): ref $(ratio peer ref)," \
       "opt 1 rank $(ratio peer opt-1-rank), opt 2 ranks $(ratio peer opt-2-ranks)"
fi
