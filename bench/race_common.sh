# What the races bench/train.sh and bench/train_events.sh share, sourced by both: running each row
# into its log, and the epoch lines' times. Needs $runs, the run directory.

# run LABEL COMMAND...: output to $runs/LABEL.log; a failure names the run and its log, and ends the script.
run() {
  local label=$1; shift
  local status=0
  "$@" > "$runs/$label.log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAILED: $label (exit status $status): $(tail -n 1 "$runs/$label.log")"
    echo "log: $runs/$label.log"
    exit 1
  fi
}

# epoch_times LABEL: "median min max" in seconds of epochs 2..E, from the epoch lines every run
# prints alike ("epoch E ... (T s)"; epoch 1, the warm-up, is left out).
epoch_times() {
  awk '/^epoch/ && $2 > 1 { gsub(/[()]/, "", $(NF-1)); print $(NF-1) }' "$runs/$1.log" | sort -g |
    awk '{ t[NR] = $1 }
         END { m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2; printf "%.3f %.3f %.3f\n", m, t[1], t[NR] }'
}
median_of() { epoch_times "$1" | cut -d' ' -f1; }
# ratio A B: A's median over B's. Epoch lines give milliseconds at best, so a median below 10 ms has
# under two digits: no ratio from it.
ratio() {
  awk -v a="$(median_of "$1")" -v b="$(median_of "$2")" \
    'BEGIN { if (a < 0.010 || b < 0.010) printf "n/a (an epoch under 10 ms)"; else printf "%.2fx", a / b }'
}

# run_twins ARGS...: the rows every race has, `twofold train ARGS` as the reference and as the twin
# on 1 and on 2 ranks (labels ref, opt-1-rank, opt-2-ranks, set in `labels`). Needs $twofold.
run_twins() {
  labels=(ref opt-1-rank opt-2-ranks)
  run ref "$twofold" train "$@" --impl ref
  run opt-1-rank "$twofold" train "$@" --impl opt
  run opt-2-ranks mpiexec --oversubscribe -n 2 -x OMP_NUM_THREADS "$twofold" train "$@" --impl opt
}
