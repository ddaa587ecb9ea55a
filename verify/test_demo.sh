#!/usr/bin/env bash
# twofold demo shows every technique working: started alone, it starts itself again under mpiexec on
# 2 ranks, so the distributed rows send something. Checked on the rows of dispatch, partition and
# async (the whole demo is .ci/run's first command): Sven's memory bytes per epoch and the exchange
# mode's bytes must be non-zero, averaging must send fewer bytes than an all-reduce a step, the
# stale embeddings must say what they save, and every twin be equal (#wrong 0). A twin spoiled on purpose
# (TWOFOLD_BREAK_TWIN) must make demo exit 1; and as root without Open MPI's allow-run-as-root
# settings, mpiexec cannot start, and demo must say so in one line and run in one process.
# Usage: test_demo.sh TWOFOLD
set -u
twofold=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

# demo ARGS...: run it (alone: it relaunches itself), output in $work/out, exit status in $status.
demo() {
    "$twofold" demo "$@" > "$work/out" 2> "$work/err"
    status=$?
    cat "$work/out" "$work/err"
}

demo dispatch partition async
[ "$status" -eq 0 ] || fail "demo dispatch partition async: exit status $status, expected 0"
grep -q '#wrong 0' "$work/out" || fail "demo dispatch partition async: no '#wrong 0'"
sven=$(grep -c 'Sven dispatch.*2 rank(s), memory bytes/epoch: sven [1-9]' "$work/out")
exchange=$(grep -c 'partition metis exchange.*2 rank(s), exchange [1-9][0-9]* bytes' "$work/out")
echo "dispatch rows with non-zero bytes on 2 ranks: $sven (must be 2); partition exchange rows: $exchange (must be 1)"
[ "$sven" -eq 2 ] || fail "dispatch: expected Sven's bytes on 2 ranks, non-zero, in both rows"
[ "$exchange" -eq 1 ] || fail "partition: expected non-zero exchange bytes on 2 ranks"
averaging=$(grep -c 'async updates average.*2 rank(s).*rank 0 sent [1-9][0-9]* bytes, [0-9.]*% less than' "$work/out")
saved=$(grep -c 'async updates dgc-zero.*% saved' "$work/out")
echo "async rows saying the bytes they save: averaging $averaging, stale embeddings $saved (must be 1 and 1)"
[ "$averaging" -eq 1 ] || fail "async: expected averaging on 2 ranks to send fewer bytes than an all-reduce a step"
[ "$saved" -eq 1 ] || fail "async: expected the stale embeddings' bytes saved"

TWOFOLD_BREAK_TWIN=schedule_hybrid demo schedule_hybrid
echo "spoiled twins: exit status $status (must be 1)"
[ "$status" -eq 1 ] && grep -q '#wrong 2' "$work/out" || fail "a spoiled twin: expected #wrong 2 and exit 1"

if [ "$(id -u)" -eq 0 ]; then
    (unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM; demo schedule_hybrid; exit "$status")
    status=$?
    notes=$(grep -c '^one process: .*could not start 2 ranks' "$work/out")
    echo "as root without allow-run-as-root: exit status $status, $notes line(s) saying so (must be 0 and 1)"
    [ "$status" -eq 0 ] && [ "$notes" -eq 1 ] && grep -q '#wrong 0' "$work/out" ||
        fail "without mpiexec: expected one line saying so, then the rows in one process"
else
    echo "not root: the fallback to one process is not exercised here"
fi
# Where mpiexec cannot be used, one line says so and the rows run in one process (exit 0):
#  - PATH without ssh or rsh: the probe fails, and the one process's own MPI_Init must not need a
#    daemon (Open MPI 4 aborted with a page of noise and exit 1);
#  - TWOFOLD_MPIEXEC naming nothing, or an "mpiexec" that starts the copy without a launcher's
#    environment (it would start itself again for ever): a third start never happens.
one_process() { # LABEL EXPECTED_TEXT (demo's output in $work/out, exit status in $status)
    local notes
    notes=$(grep -c '^one process: ' "$work/out")
    echo "$1: exit status $status, $notes line(s) saying one process (must be 0 and 1)"
    [ "$status" -eq 0 ] && [ "$notes" -eq 1 ] && grep -q -- "$2" "$work/out" && grep -q '#wrong 0' "$work/out" ||
        fail "$1: expected one line containing '$2', then the rows in one process"
}
(PATH=; "$twofold" demo schedule_hybrid > "$work/out" 2> "$work/err")
status=$?
one_process "PATH empty" "one process: "
(TWOFOLD_MPIEXEC=/nonexistent/mpiexec demo schedule_hybrid > /dev/null; exit "$status")
status=$?
one_process "TWOFOLD_MPIEXEC=/nonexistent/mpiexec" "no mpiexec (TWOFOLD_MPIEXEC=/nonexistent/mpiexec)"
printf '#!/bin/sh\nshift 6\nexec "$@"\n' > "$work/mpiexec" # drops its options, runs the copy as is
chmod +x "$work/mpiexec"
(TWOFOLD_MPIEXEC=$work/mpiexec timeout 60 "$twofold" demo schedule_hybrid > "$work/out" 2> "$work/err"; exit $?)
status=$?
one_process "an mpiexec without a launcher's environment" "does not start itself a third time"
grep -q $'\r' "$work/out" "$work/err" && fail "output to a file holds a progress line's carriage return"
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "demo: distributed rows on 2 ranks, non-zero bytes, #wrong 0"
