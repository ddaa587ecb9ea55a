#!/usr/bin/env bash
# bench/train.sh end to end on a tiny generated graph (bench/peer/README.md), without the peer:
#  1. 4 epochs with PYTHON=/bin/false: twofold's three rows, validated before the table, and a line
#     saying the peer is missing;
#  2. a stand-in peer that ends elsewhere: validation fails, exit 1, and no time is printed;
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
