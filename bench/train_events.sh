#!/usr/bin/env bash
# Epoch time of event-model training: the reference, the optimized twin on 1 and 2 MPI ranks, and
# (when it is installed, MODEL tgn) PyTorch Geometric's TGN on the same events, in one run on this
# machine, with ratios.
#
#   bench/train_events.sh [MODEL [DATA [EPOCHS]]]        (default: tgn wikipedia 3)
#   bench/train_events.sh all [DATA [EPOCHS]]            (the whole race, one row after another)
#
# `all` is the race a quiet machine runs in one command: TGN per entry (TGL's rule) and per vertex
# (the peer's, like with like), JODIE, and TGL's settings (WIDTH=100 BATCH=600 LR=1e-4, per vertex,
# the reference left out unless TGL_REF=1: at those widths its epoch takes a quarter of an hour or
# more; TGL_EPOCHS epochs, default EPOCHS: at lr 1e-4 the peer starts slower, chapter 01b, "The race"),
# each a run of this script as below with its own header, validation and load; then a
# summary of every row's ratios and the load before and after each. It goes on past a row that
# fails (validation or a run) and exits 1 at the end if any did. WIDTH, BATCH, LR and RULE from
# the environment are ignored there (each row sets its own).
#
# MODEL is tgn or jodie; DATA anything `twofold train --data` takes for an event model (a bundled
# name, a file, a generator spec). Settings: memory, time and embedding widths WIDTH (default 32),
# 2 heads, 10 neighbours, batches of BATCH (default 200), lr LR (default 1e-3), negatives from every
# vertex, split 70/15/15 in time, twofold's seed 1; WIDTH=100 BATCH=600 LR=1e-4 are TGL's. The
# memory-update rule is RULE (default vertex, the peer's: like with like; entry is TGL's). The
# program is TWOFOLD (default build/twofold). REF=0 leaves the reference out (at TGL's widths an
# epoch of it takes a quarter of an hour or more): the twins are then validated against the twin
# on one rank, whose equality with the reference is verify/test_dispatch_mpi.c's, not this run's.
#
# Threads: one per twofold rank (OMP_NUM_THREADS=1) and one torch thread for the peer. The header
# prints the machine and its load (uptime) before and after: other work on it slows every row.
#
# The peer: bench/peer/peer_tgn.py, PyTorch Geometric's TGN (TGNMemory, IdentityMessage,
# LastAggregator, a TransformerConv; twofold's neighbour sampler) on the same events, widths, batch,
# neighbours, negatives and split, when PYTHON (default python3) can import torch_geometric
# (bench/peer/README.md installs it); else twofold's rows alone. It updates each vertex's memory
# once per batch from its last message, as twofold does under RULE=vertex (chapter 01, "One batch,
# step by step"; under RULE=entry twofold updates it once per batch entry at the entry's time):
# the same model, not the same code (the peer builds a message from the memories when it consumes
# it, twofold when it writes it; initial parameters, attention details and negatives' random
# stream differ), so it is validated by its test AP, within PEER_TOLERANCE (default 0.01) of the
# reference's.
#
# Order: every run first, then validation, then times. The twins must end within TWIN_TOLERANCE
# (default 0.01) of the reference's test AP: they compute the reference's model within the fp
# tolerance batch by batch (verify/test_dispatch_mpi.c checks that in lockstep), but free-running
# the time encoders' cos(w dt), dt up to 1e6 s, turn one-ulp differences into different training
# (chapter 01b, "The race"). A run that fails, or a result off its tolerance, ends the script with exit 1
# before any time is printed.
#
# Times: the median and the spread (min..max) of epochs 2..EPOCHS (the first includes warm-up);
# twofold's epochs include validation and test, the peer's too. Logs stay in a fresh directory
# under ${TMPDIR:-/tmp} (printed).
set -euo pipefail
case ${1:-} in -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
die() { echo "bench/train_events.sh: $*" >&2; exit 1; }

if [ "${1:-}" = all ]; then
  all_data=${2-wikipedia}
  all_epochs=${3-3}
  [ -e "$all_data" ] && all_data=$(realpath "$all_data")
  summary=$(mktemp "${TMPDIR:-/tmp}/twofold-events-race.XXXXXX")
  failed=0
  tgl_epochs=${TGL_EPOCHS:-$all_epochs}
  # row TITLE VAR=VALUE... -- MODEL [EPOCHS]: one run of this script, its output shown and kept for the summary.
  row() {
    local title=$1 settings=() status=0
    shift
    while [ "$1" != -- ]; do settings+=("$1"); shift; done
    shift
    echo "=== $title ($(date -u '+%H:%M UTC'))"
    env -u WIDTH -u BATCH -u LR -u RULE -u REF "${settings[@]}" bash "$0" "$1" "$all_data" "${2:-$all_epochs}" |
      tee "$summary.row" || status=$?
    [ "$status" -eq 0 ] || failed=1
    { echo "$title: $([ "$status" -eq 0 ] && echo validated || echo "FAILED (exit $status)")"
      sed -n -e 's/^machine: .*load before: \([^;]*\);.*/  load before: \1/p' -e 's/^load after: /  load after: /p' \
          -e 's/^speedup/  speedup/p' -e 's/^FAILED/  FAILED/p' "$summary.row"; } >> "$summary"
    echo
  }
  row "TGN, memory per entry (TGL's rule)" RULE=entry -- tgn
  row "TGN, memory per vertex (the peer's rule: like with like)" RULE=vertex -- tgn
  row "JODIE, memory per entry" RULE=entry -- jodie
  row "TGN at TGL's settings (widths 100, batches of 600, lr 1e-4), per vertex, $tgl_epochs epochs" WIDTH=100 BATCH=600 LR=1e-4 \
      RULE=vertex REF="${TGL_REF:-0}" -- tgn "$tgl_epochs"
  echo "=== summary ($all_data, $all_epochs epochs; ended $(date -u '+%H:%M UTC'))"
  cat "$summary"
  rm -f "$summary" "$summary.row"
  exit "$failed"
fi

model=${1-tgn}
data=${2-wikipedia}
epochs=${3-3}
width=${WIDTH:-32}
batch=${BATCH:-200}
lr=${LR:-1e-3}
rule=${RULE:-vertex}
with_ref=${REF:-1}
twin_tolerance=${TWIN_TOLERANCE:-0.01}
peer_tolerance=${PEER_TOLERANCE:-0.01}
twofold=${TWOFOLD:-build/twofold}
python=${PYTHON:-python3}
[ -e "$data" ] && data=$(realpath "$data")
[ -n "${TWOFOLD:-}" ] && [ -e "$twofold" ] && twofold=$(realpath "$twofold")
[[ $python == */* ]] && [ -e "$python" ] && python=$(realpath -s "$python")
cd "$(dirname "$0")/.."

case $model in
  tgn | jodie) ;;
  *) die "MODEL $model: expected tgn or jodie" ;;
esac
case $rule in
  entry | vertex) ;;
  *) die "RULE $rule: expected entry or vertex" ;;
esac
case $with_ref in
  0 | 1) ;;
  *) die "REF $with_ref: expected 1 (run the reference) or 0 (leave it out)" ;;
esac
[ -n "$data" ] || die "DATA is empty: expected a bundled name, a file or a generator spec"
[[ $epochs =~ ^[0-9]+$ ]] && ((10#$epochs >= 2)) ||
  die "EPOCHS \"$epochs\": expected a whole number >= 2 (epoch 1, the warm-up, is not timed)"
epochs=$((10#$epochs))
for pair in "WIDTH $width" "BATCH $batch"; do
  set -- $pair
  [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 \"$2\": expected a whole number >= 1"
done
[ -x "$twofold" ] || die "$twofold is not an executable: build twofold first (README.md), or set TWOFOLD"

cores=$(getconf _NPROCESSORS_ONLN) # not nproc, which reports OMP_NUM_THREADS when it is set
runs=$(mktemp -d "${TMPDIR:-/tmp}/twofold-events-bench.XXXXXX")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
shared=(--model "$model" --memory-dim "$width" --time-dim "$width" --batch "$batch" --lr "$lr" --data "$data"
        --epochs "$epochs" --memory-update "$rule")
[ "$model" = tgn ] && shared+=(--embedding-dim "$width") # JODIE's embedding is its memory

echo "bench/train_events.sh: $model on $data, $epochs epochs, widths $width, batches of $batch, lr $lr, memory updated per $rule; 1 thread per rank and for the peer"
. bench/race_common.sh # run, run_twins, epoch_times, median_of, ratio
echo "machine: $cores cores ($(lscpu | sed -n 's/^Model name: *//p')); load before: $(uptime | sed 's/.*load average: //'); logs in $runs"

# 1. Every run, before anything is judged or timed.
if [ "$with_ref" = 1 ]; then
  run_twins "${shared[@]}"
else
  echo "reference left out (REF=0): the twins are validated against the twin on one rank"
  labels=(opt-1-rank opt-2-ranks)
  run opt-1-rank "$twofold" train "${shared[@]}" --impl opt
  run opt-2-ranks mpiexec --oversubscribe -n 2 -x OMP_NUM_THREADS "$twofold" train "${shared[@]}" --impl opt
fi
base=${labels[0]}
if [ "$model" = tgn ] && "$python" -c "import torch_geometric" > /dev/null 2>&1; then
  run peer "$python" -W ignore bench/peer/peer_tgn.py --data "$data" --epochs "$epochs" --width "$width" \
      --batch "$batch" --lr "$lr" --threads 1
  labels+=(peer)
elif [ "$model" = tgn ]; then
  echo "peer: PyTorch Geometric is not importable by $python (bench/peer/README.md installs it); twofold's rows only"
fi
echo "load after: $(uptime | sed 's/.*load average: //')"
[ "${labels[-1]}" = peer ] && head -n 1 "$runs/peer.log"

# 2. Validation: every run ends near the reference's test AP.
final_ap() { awk '/^final test AP/ { print $4 }' "$runs/$1.log"; }
for label in "${labels[@]:1}"; do
  tolerance=$twin_tolerance
  [ "$label" = peer ] && tolerance=$peer_tolerance
  if ! awk -v a="$(final_ap "$label")" -v b="$(final_ap "$base")" -v t="$tolerance" \
       'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; then
    echo "FAILED validation: $label ends at test AP $(final_ap "$label"), $base at $(final_ap "$base")" \
         "(tolerance $tolerance): no times reported; logs in $runs"
    exit 1
  fi
  echo "validated: $label ends at test AP $(final_ap "$label"), $base at $(final_ap "$base") (within $tolerance)"
done

# 3. Times: median and spread of epochs 2..E from the epoch lines (twofold's and the peer's alike).
# bytes_of LABEL: the memory rows the ranks sent in the last epoch (2 ranks), from its traffic line.
bytes_of() { sed -n 's/.*bytes sent: memory rows \([0-9.e+]* MB\).*/\1/p' "$runs/$1.log" | tail -n 1; }
printf '%-12s %10s %21s %13s %s\n' run "median s" "spread (min..max) s" "final test AP" "memory rows sent per epoch"
for label in "${labels[@]}"; do
  read -r median low high < <(epoch_times "$label")
  printf '%-12s %10s %21s %13s %s\n' "$label" "$median" "$low..$high" "$(final_ap "$label")" "$(bytes_of "$label")"
done
[ "$with_ref" = 1 ] &&
  echo "speedup over ref (medians): opt 1 rank $(ratio ref opt-1-rank), opt 2 ranks $(ratio ref opt-2-ranks)"
if [ "${labels[-1]}" = peer ]; then
  rows=""
  [ "$with_ref" = 1 ] && rows="ref $(ratio peer ref), "
  echo "speedup over PyTorch Geometric's TGN (medians, same CPU, 1 thread each; twofold updates memory per" \
       "$rule, the peer per vertex): $rows""opt 1 rank $(ratio peer opt-1-rank), opt 2 ranks $(ratio peer opt-2-ranks)"
fi
