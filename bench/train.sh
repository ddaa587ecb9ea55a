#!/usr/bin/env bash
# Epoch time of snapshot-model training: the reference, the optimized twin on 1 and 2 MPI
# ranks, and (when it is installed) PyTorch Geometric Temporal on the same model and data, in
# one run on this machine, with ratios. Validates first: the optimized runs must end with the
# reference's test MSE (relative difference <= 1e-4), or no time is reported.
#
#   bench/train.sh [MODEL [DATASET [EPOCHS]]]        (default: tgcn twitter_tennis 5)
#
# Settings: hidden 32, windows of 8 snapshots, 4 windows per Adam step (so two ranks each run
# two), lr 0.01, train ratio 0.8. Times are the mean epoch time over epochs 2..E (the first
# includes warm-up). The peer runs when `python3 -c "import torch_geometric_temporal"` works
# (set PYTHON to choose the interpreter; bench/peer/shim is put on PYTHONPATH).
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-tgcn}
data=${2:-twitter_tennis}
epochs=${3:-5}
twofold=${TWOFOLD:-build/twofold}
python=${PYTHON:-python3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
settings=(--model "$model" --data "$data" --epochs "$epochs" --hidden 32 --window 8 --batch 4 --lr 0.01 --train-ratio 0.8)

# mean seconds of epochs 2..E, and the final test MSE, from twofold-format output
epoch_time() { awk '/^epoch/ { gsub(/[()]/, "", $(NF-1)); if ($2 > 1) { s += $(NF-1); n++ } } END { printf "%.4f", s / n }'; }
final_mse() { awk '/^final test MSE/ { print $4 }'; }

run() { # label, command...: runs, keeps the output, prints the summary line
  local label=$1; shift
  local output
  output=$("$@")
  printf '%s\n' "$output" > "/tmp/twofold-bench-$label.log"
  printf '%-22s epoch %8s s   final test MSE %s\n' "$label" "$(epoch_time <<<"$output")" "$(final_mse <<<"$output")"
}

echo "bench/train.sh: $model on $data, $epochs epochs, $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p'))"
run ref "$twofold" train "${settings[@]}" --impl ref
run opt-1-rank "$twofold" train "${settings[@]}" --impl opt
run opt-2-ranks mpiexec --oversubscribe -n 2 "$twofold" train "${settings[@]}" --impl opt
peer=""
if PYTHONPATH=bench/peer/shim "$python" -c "import torch_geometric_temporal" 2>/dev/null; then
  run pytorch-geometric-temporal env PYTHONPATH=bench/peer/shim "$python" -W ignore bench/peer/peer_train_time.py \
      --model "$model" --data "$data" --epochs "$epochs" --hidden 32 --window 8 --batch 4 --lr 0.01 --train-ratio 0.8
  peer=pytorch-geometric-temporal
else
  echo "pytorch-geometric-temporal: not installed for $python, skipped"
fi

# Validation: the twins must end where the reference ends.
reference=$(final_mse < /tmp/twofold-bench-ref.log)
for label in opt-1-rank opt-2-ranks; do
  value=$(final_mse < "/tmp/twofold-bench-$label.log")
  if ! awk -v a="$value" -v b="$reference" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * (b > 1 ? b : 1)) }'; then
    echo "FAILED: $label ends at test MSE $value, the reference at $reference: not reporting times"
    exit 1
  fi
done
echo "validated: opt on 1 and 2 ranks end at the reference's test MSE $reference (within 1e-4)"

time_of() { epoch_time < "/tmp/twofold-bench-$1.log"; }
ratio() { awk -v a="$(time_of "$1")" -v b="$(time_of "$2")" 'BEGIN { printf "%.2fx", a / b }'; }
echo "speedup over ref: opt 1 rank $(ratio ref opt-1-rank), opt 2 ranks $(ratio ref opt-2-ranks)"
if [ -n "$peer" ]; then
  echo "speedup over PyTorch Geometric Temporal (same CPU): ref $(ratio $peer ref), opt 1 rank $(ratio $peer opt-1-rank), opt 2 ranks $(ratio $peer opt-2-ranks)"
fi
