#!/usr/bin/env bash
# bench/train.sh end to end on a tiny generated graph (bench/peer/README.md), without the peer:
#  1. 4 epochs with PYTHON=/bin/false: twofold's three rows, validated before the table, and a line
#     saying the peer is missing;
#  2. a stand-in peer that ends elsewhere: validation fails, exit 1, and no time is printed; one
#     that agrees after epoch 1 and parts later by less than the reference's last epoch moved:
#     validated on epoch 1, both differences printed, timed; one that ends further off: fails;
#  3. a model the peer does not have (WD-GCN): twofold's rows alone, the peer not asked;
#  4. EPOCHS 1 and a non-integer are refused with the reason; a run that fails is named with its log.
# Usage: test_bench_train.sh TWOFOLD (ctest passes the program; logs go under $TMPDIR).
set -uo pipefail
twofold=$1
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/test_bench_train.XXXXXX")
export TMPDIR=$work TWOFOLD=$twofold
data=powerlaw:nodes=200,edges=1000,snapshots=20,arrival=0.1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# line_of PATTERN FILE: the number of the first line matching, or 0.
line_of() { grep -n -m 1 -e "$1" "$2" | cut -d: -f1 || true; }

echo "== 1. without the peer"
PYTHON=/bin/false "$source_dir/bench/train.sh" tgcn "$data" 4 > "$work/plain.txt" 2>&1
status=$?
cat "$work/plain.txt"
[ "$status" -eq 0 ] || fail "bench/train.sh exited with $status"
for expected in "1 thread(s) per twofold rank" "logs in $work/twofold-train-bench." "not importable by /bin/false" \
                "^ref  " "^opt-1-rank  " "^opt-2-ranks  " "speedup over ref"; do
  grep -q -e "$expected" "$work/plain.txt" || fail "no line with \"$expected\""
done
validated=$(line_of "^validated: opt-2-ranks" "$work/plain.txt")
table=$(line_of "median s" "$work/plain.txt")
[ -n "$validated" ] && [ -n "$table" ] && [ "$validated" -lt "$table" ] || fail "the table came before the validation"

echo "== 2. a peer that ends elsewhere"
cat > "$work/fake-python" <<'FAKE'
#!/usr/bin/env bash
# imports succeed; a run prints four epochs ending at test MSE 9
[ "$1" = -c ] && exit 0
echo "peer: torch stand-in, 1 thread(s)"
for e in 1 2 3 4; do echo "epoch    $e  train loss 9.0  test MSE 9.000000  (0.001 s)"; done
echo "final test MSE 9.000000 after 4 epochs (0.00 s)"
FAKE
chmod +x "$work/fake-python"
PYTHON=$work/fake-python "$source_dir/bench/train.sh" tgcn "$data" 4 > "$work/fake.txt" 2>&1
status=$?
cat "$work/fake.txt"
[ "$status" -eq 1 ] || fail "a peer off the reference: exit status $status, expected 1"
grep -q "FAILED validation: peer ends at test MSE 9.000000" "$work/fake.txt" || fail "no validation failure named"
if grep -q -e "median s" -e "speedup" "$work/fake.txt"; then fail "times printed although validation failed"; fi

echo "== 2b. a peer that agrees after epoch 1 and parts later (as a state at the ReLU's kink can make it)"
cat > "$work/parting-python" <<'FAKE'
#!/usr/bin/env bash
# imports succeed; a run is the reference's own training (so epoch 1 agrees) with its epoch 4 test
# MSE moved: by a thousandth of itself (PARTING=near; less than the reference's last epoch moves it
# on this data), or to 9 (PARTING=far)
[ "$1" = -c ] && exit 0
shift 3 # -W ignore SCRIPT
settings=()
while [ $# -gt 0 ]; do
  case $1 in --data-dir | --init | --threads) shift 2 ;; *) settings+=("$1"); shift ;; esac
done
echo "peer: torch stand-in, 1 thread(s)"
"$TWOFOLD" train "${settings[@]}" --data "$PARTING_DATA" | awk -v far="$([ "$PARTING" = far ] && echo 1)" '
  $1 == "epoch" && $2 == 4 { $8 = sprintf("%.6f", far ? 9 : $8 * 1.001); last = $8 }
  $1 == "epoch" { print }
  END { print "final test MSE " last " after 4 epochs (0.00 s)" }'
FAKE
chmod +x "$work/parting-python"
export PARTING_DATA=$data
PARTING=near PYTHON=$work/parting-python "$source_dir/bench/train.sh" tgcn "$data" 4 > "$work/parting.txt" 2>&1
status=$?
cat "$work/parting.txt"
[ "$status" -eq 0 ] || fail "a peer parting after epoch 1 by 1e-3: exit status $status, expected 0"
grep -q "^validated on epoch 1: peer's test MSE .*(relative difference 0 <= 1e-5); it ends at .*parted after epoch 1" \
  "$work/parting.txt" || fail "no line validating the parting peer on epoch 1"
grep -q "^peer  " "$work/parting.txt" || fail "the parting peer was not timed"
echo "== 2c. a peer that agrees after epoch 1 and ends further off than the reference's last epoch moved"
PARTING=far PYTHON=$work/parting-python "$source_dir/bench/train.sh" tgcn "$data" 4 > "$work/far.txt" 2>&1
status=$?
cat "$work/far.txt"
[ "$status" -eq 1 ] || fail "a peer ending far off: exit status $status, expected 1"
grep -q "^FAILED validation: peer ends at test MSE 9.000000.*epoch 1's relative difference 0," "$work/far.txt" ||
  fail "no validation failure naming epoch 1's agreement"
if grep -q -e "median s" -e "speedup" "$work/far.txt"; then fail "times printed although validation failed"; fi

echo "== 3. a model PyG Temporal does not have: twofold's rows, the peer not run (the stand-in would fail it)"
PYTHON=$work/fake-python "$source_dir/bench/train.sh" wdgcn "$data" 4 > "$work/no-peer.txt" 2>&1
status=$?
cat "$work/no-peer.txt"
[ "$status" -eq 0 ] || fail "wdgcn: exit status $status"
grep -q "peer: PyTorch Geometric Temporal has no wdgcn; twofold's rows only" "$work/no-peer.txt" || fail "wdgcn: no line saying the peer has no such model"
grep -q "^opt-2-ranks  " "$work/no-peer.txt" || fail "wdgcn: no twofold rows"

echo "== 4. refusals"
check_refusal() { # expected-text, arguments...
  local expected=$1; shift
  "$source_dir/bench/train.sh" "$@" > "$work/refused.txt" 2>&1
  local status=$?
  cat "$work/refused.txt"
  [ "$status" -ne 0 ] || fail "bench/train.sh $*: exit status 0"
  grep -q -e "$expected" "$work/refused.txt" || fail "bench/train.sh $*: no \"$expected\""
}
check_refusal "EPOCHS 1: at least 4, since epoch 1 (warm-up) is not timed" tgcn "$data" 1
check_refusal "EPOCHS \"four\": expected a whole number" tgcn "$data" four
check_refusal "MODEL tgn: expected one of tgcn gconvgru gclstm evolvegcn tgcn2 wdgcn gconvlstm mpnnlstm gcrnm1 dcrnn cdgcn" \
  tgn "$data" 4
PYTHON=/bin/false check_refusal "FAILED: ref (exit status 2): twofold: error: train: wikipedia is an event stream" \
  tgcn wikipedia 4
grep -q "^log: $work/twofold-train-bench.*/ref.log" "$work/refused.txt" || fail "the failed run's log is not named"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed; files in $work"
  exit 1
fi
rm -rf "$work"
echo "all checks passed"
