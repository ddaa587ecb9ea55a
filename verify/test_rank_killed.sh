#!/usr/bin/env bash
# A rank killed mid-run ends the whole distributed job in seconds, with a non-zero status, instead of
# leaving the other ranks waiting in a collective for ever. Starts `twofold train --impl opt` on two
# ranks, waits for its first epoch, kills one rank with SIGKILL and measures how long mpiexec takes
# to end. Usage: test_rank_killed.sh TWOFOLD MPIEXEC
set -u
twofold=$1 mpiexec=$2
limit=30 # seconds: Open MPI ends the job in about one; far more means it hung
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mpiexec" -n 2 --oversubscribe "$twofold" train --model tgcn --data chickenpox --impl opt --epochs 1000000 \
    > "$work/out" 2>&1 &
job=$!
for _ in $(seq 600); do # up to 60 s for the first epoch on a loaded machine
    grep -q '^epoch' "$work/out" && break
    sleep 0.1
done
rank=
for stat in /proc/[0-9]*/stat; do # a child of mpiexec: one of the ranks (no procps needed)
    read -r pid _ _ parent _ < "$stat" 2>/dev/null || continue
    [ "$parent" = "$job" ] && rank=$pid && break
done
if [ -z "$rank" ] || ! grep -q '^epoch' "$work/out"; then
    echo "no rank of the job to kill, or no epoch printed:"; cat "$work/out"; kill -9 "$job" 2>/dev/null; exit 1
fi
kill -9 "$rank"
start=$(date +%s%N)
while kill -0 "$job" 2>/dev/null && [ $(( ($(date +%s%N) - start) / 1000000000 )) -lt "$limit" ]; do
    sleep 0.05
done
kill -9 "$job" 2>/dev/null # still there past the limit: the job hung
wait "$job"
status=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "killed rank process $rank after the first epoch: mpiexec ended with status $status after" \
     "$((elapsed_ms / 1000)).$(printf '%03d' $((elapsed_ms % 1000))) s (limit $limit s)"
if [ "$status" -eq 0 ] || [ "$elapsed_ms" -ge $((limit * 1000)) ]; then
    echo "FAILED: the job must end with a non-zero status within $limit s"; tail -5 "$work/out"; exit 1
fi
