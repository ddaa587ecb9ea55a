#!/usr/bin/env bash
# Writes never destroy, reads never block (verify/ERRORS.md, Writes and reads; ref/core/io.h):
#  1. a FIFO, a device or a symbolic link at an output path is refused before any work, in one
#     line with exit 2, and is still what it was afterwards (partition --save, train
#     --dump-outputs, schedule --gantt). Only nodes the test made itself are offered as outputs,
#     never a system's device: a regression must not replace /dev/null;
#  2. an output path that cannot be written (missing directory, a directory, a file where the
#     dump's directory goes) is refused before training or partitioning, not after;
#  3. a write that fails for lack of room exits 3 (the machine's failure: not 2, bad input, nor 1,
#     a twin that differs), says so in one line, never says "wrote", and leaves the file that was
#     at the path as it was, with no temporary behind. The full disk is a file size limit
#     (ulimit -f, SIGXFSZ ignored, so write() fails with EFBIG): no device is ever written to;
#  4. a FIFO or a device given as input is refused at once (a FIFO used to block the open for
#     ever; /dev/zero was read for gigabytes), under a time limit so that a hang fails the test;
#  5. a .npy.gz whose header is valid and whose body inflates far past its shape stops one byte
#     past the shape, under a --memory-limit the whole body would exceed.
#  6. the bench program's CSV files go the same way: on a full disk the old metrics.csv is kept.
# Usage: test_writes.sh TWOFOLD BENCH
set -u
twofold=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
D=powerlaw:nodes=200,edges=1000,snapshots=6
E=events:nodes=100,events=1000
failures=0 cases=0
as_user= # a command that runs twofold as another user (setpriv ...), or nothing
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run EXPECTED_STATUS TEXT ARG...: twofold ARG... (20 s at most) must exit EXPECTED_STATUS with
# one stderr line containing TEXT; its stdout is left in out.
run() {
    local expected=$1 text=$2
    shift 2
    cases=$((cases + 1))
    timeout 20 $as_user "$twofold" "$@" > out 2> err
    local status=$? lines
    lines=$(wc -l < err)
    if [ "$status" -ne "$expected" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$text" err; then
        fail "twofold $*: exit $status (expected $expected), stderr: $(cat err)"
    else
        echo "exit $status as expected: $(cat err)"
    fi
}

# limited BLOCKS EXPECTED_STATUS TEXT ARG...: run under a file size limit of BLOCKS blocks.
limited() {
    local blocks=$1
    shift
    ( ulimit -f "$blocks"; trap '' XFSZ; run "$@"; echo "$failures $cases" > counts )
    read -r failures cases < counts
}

# kind PATH: what is at PATH (file type as stat says it).
kind() { stat -c %F "$1"; }

echo "== 1. what is at the output path is refused, and stays"
mkfifo fifo.npy
echo original > target.npy
ln -s target.npy link.npy
run 2 "partition: --save fifo.npy: is a FIFO, which writing would replace" \
    partition --data $D --ranks 4 --method hash --save fifo.npy
[ "$(kind fifo.npy)" = fifo ] || fail "fifo.npy is now $(kind fifo.npy)"
run 2 "partition: --save link.npy: is a symbolic link" partition --data $D --ranks 4 --method hash --save link.npy
[ -L link.npy ] && [ "$(cat target.npy)" = original ] || fail "link.npy or its target changed"
# A device node of our own (a copy of the null device, made where root may make one): never a
# system's device, so that a regression replaces only the test's own node.
if mknod device.npy c 1 3 2> /dev/null; then
    run 2 "partition: --save device.npy: is a character device" \
        partition --data $D --ranks 4 --method hash --save device.npy
    [ -c device.npy ] || fail "device.npy is no longer a device"
else
    echo "(no device node: mknod needs root; the FIFO and the link stand for it)"
fi
mkdir dump
mkfifo dump/predictions.npy
run 2 "train: --dump-outputs dump/predictions.npy: is a FIFO" \
    train --model tgcn --data $D --epochs 1 --dump-outputs dump
[ "$(kind dump/predictions.npy)" = fifo ] || fail "dump/predictions.npy is now $(kind dump/predictions.npy)"
run 2 "schedule: --gantt fifo.npy: is a FIFO" schedule --times 1,2,3 --ranks 2 --gantt fifo.npy
[ "$(kind fifo.npy)" = fifo ] || fail "fifo.npy is now $(kind fifo.npy) after --gantt"

echo "== 2. a path that cannot be written is refused before the work"
run 2 "train: --dump-outputs /nonexistent/dump: the directory /nonexistent does not exist" \
    train --model tgcn --data $D --epochs 1 --dump-outputs /nonexistent/dump
grep -q "final test MSE" out && fail "train trained before refusing --dump-outputs"
run 2 "train: --dump-outputs target.npy: is a regular file, expected a directory" \
    train --model tgcn --data $D --epochs 1 --dump-outputs target.npy
run 2 "partition: --save dump: is a directory" partition --data $D --ranks 4 --method hash --save dump
grep -q "edge cut" out && fail "partition partitioned before refusing --save DIR"

echo "== 2b. the longest name a file may have is written; a read-only file is not replaced"
long=$(printf 'n%.0s' $(seq 251)).npy # 255 bytes: its temporary's name is cut to fit
cases=$((cases + 1))
timeout 20 "$twofold" partition --data $D --ranks 4 --method hash --save "$long" > out 2> err && [ -f "$long" ] ||
    fail "a 255-byte name: $(cat err)"
# As another user (root may write anything): a read-only file in a writable directory.
if [ "$(id -u)" -eq 0 ] && setpriv --reuid=65534 --regid=65534 --clear-groups "$twofold" --help > /dev/null 2>&1; then
    mkdir shared && chmod 777 shared && echo original > shared/kept.npy && chmod 444 shared/kept.npy
    chmod 755 "$work"
    cd shared || exit 1
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    run 2 "partition: --save kept.npy: cannot write it: Permission denied" \
        partition --data $D --ranks 4 --method hash --save kept.npy
    as_user=
    cd .. || exit 1
    [ "$(cat shared/kept.npy)" = original ] || fail "the read-only kept.npy was replaced"
else
    echo "(not root, or the program is out of another user's reach: the read-only case is skipped)"
fi

echo "== 3. a full disk: exit 3, one line, the old file kept, no temporary"
echo original > owners.npy
limited 1 3 "owners.npy: write failed: File too large; owners.npy is left as it was" \
    partition --data $D --ranks 4 --method hash --save owners.npy
[ "$(cat owners.npy)" = original ] || fail "owners.npy was changed by the failed write"
echo original > gantt.csv
times=$(seq -s, 1 600) # 600 groups: a Gantt CSV of about 15 KB
limited 8 3 "gantt.csv: write failed: File too large" schedule --times "$times" --ranks 4 --method lpt --gantt gantt.csv
grep -q "^wrote" out && fail "schedule said it wrote gantt.csv"
[ "$(cat gantt.csv)" = original ] || fail "gantt.csv was changed by the failed write"
timeout 60 "$twofold" train --model tgcn --data $D --epochs 1 --hidden 64 --save ckpt > /dev/null || fail "a save"
cp -r ckpt ckpt.before
limited 8 3 "write failed: File too large" train --model tgcn --data $D --epochs 2 --hidden 64 --save ckpt
diff -r ckpt ckpt.before > /dev/null || fail "the failed save changed the earlier checkpoint"
[ -e ckpt.partial ] && fail "the failed save left ckpt.partial"
limited 8 3 "predictions.npy: write failed: File too large" \
    train --model tgcn --data powerlaw:nodes=2000,edges=4000,snapshots=6 --epochs 1 --dump-outputs dump2
limited 8 3 "write failed: File too large" export --data powerlaw:nodes=2000,edges=4000,snapshots=3 --out exported
[ -e exported ] || [ -e exported.partial ] && fail "export left exported or exported.partial behind"
leftovers=$(find . -name '*.tmp??????' | wc -l)
echo "temporary files left behind: $leftovers"
[ "$leftovers" -eq 0 ] || fail "$leftovers temporary file(s) left: $(find . -name '*.tmp??????')"

echo "== 3b. the bench program's CSV on a full disk"
mkdir benchout && echo original > benchout/metrics.csv
cases=$((cases + 1))
# stdout to /dev/null: a log file would be cut by the same limit
message=$( (ulimit -f 4; trap '' XFSZ; timeout 60 "$bench" partition --quick --out benchout 2>&1 > /dev/null; echo "bench: exit $?") | grep 'bench:')
echo "bench partition under a 4-block limit: $message"
case "$message" in
    *"bench: exit 3") ;; # the machine failed: not 1, which says a twin differs
    *) fail "bench partition on a full disk: expected exit 3: '$message'" ;;
esac
case "$message" in
    *"metrics.csv: write failed"*"left as it was"*) ;;
    *) fail "bench partition on a full disk: '$message'" ;;
esac
[ "$(cat benchout/metrics.csv)" = original ] || fail "bench partition replaced metrics.csv with a cut file"
[ -z "$(ls benchout | grep tmp)" ] || fail "bench partition left a temporary: $(ls benchout)"

echo "== 4. a FIFO or a device as input is refused at once"
mkfifo data.json
run 2 "data.json: is a FIFO, expected a regular file" info data.json
run 2 "fifo.npy: is a FIFO, expected a regular file" train --model tgn --data $E --epochs 1 --edge-features fifo.npy
run 2 "/dev/zero: is a character device, expected a regular file" \
    train --model tgn --data $E --epochs 1 --edge-features /dev/zero
run 2 "/dev/urandom: is a character device, expected a regular file" \
    train --model tgn --data $E --epochs 1 --impl opt --placement file:/dev/urandom

echo "== 5. a .npy.gz body is read no further than its shape"
# The header of a float32 [4] array, padded to 64 bytes as numpy pads it, then 64 MiB of zeros.
dict="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
pad=$((64 - 10 - ${#dict} - 1))
{ printf '\x93NUMPY\x01\x00%b\x00' "\\x$(printf %02x $((${#dict} + pad + 1)))"; printf '%s%*s\n' "$dict" $pad ''
  head -c 67108864 /dev/zero; } | gzip -1 > bomb.npy.gz
echo "bomb.npy.gz: $(stat -c %s bomb.npy.gz) bytes, inflating to 64 MiB"
run 2 "bomb.npy.gz: .npy data is more than the 16 bytes the shape needs (trailing bytes)" \
    --memory-limit 16M train --model tgn --data $E --epochs 1 --edge-features bomb.npy.gz

echo "$cases cases, $failures failure(s)"
[ "$failures" -eq 0 ]
