#!/usr/bin/env bash
# Chapter 01b's numbers (TGN, JODIE, APAN): every output block, table and figure, into
# bench/results/01-models/events_*.txt. TGN's and APAN's runs use the fast twin on one rank
# (`--impl opt`), whose batches verify/test_dispatch_mpi.c holds to the reference's within fp; the
# reference's own epochs of these two are ten to twenty times longer. Steps in order of cost; STEPS=REGEX runs only the
# steps whose file name matches it (e.g. STEPS='figure|jodie').
# takes: about 45 min on 2 cores at load 20, without the race (events_race.txt: 33 min more, load 6.5 to 1.4)
# Measured 2026-11-29 at nice 15, the steps spread over three runs: TGN's 3 epochs on Wikipedia 9 min,
# its replay 1, the rules 8, the destinations 11, the streams 8, APAN 5 and 4 on Wikipedia, TGL's
# widths 7, the 2-rank lockstep check 9; less on a quiet machine. The race, bench/train_events.sh all, ran on its own
# (2026-11-29 15:31-16:04 UTC, at normal priority while other work ran at nice 15).
set -uo pipefail
. "$(dirname "$0")/common.sh"
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=bench/results/01-models
saved=$(mktemp -d "${TMPDIR:-/tmp}/twofold-events.XXXXXX") # TGN's checkpoint, for the replay
trap 'rm -rf "$saved"' EXIT

# A step, unless STEPS leaves it out.
run() { [[ $1 =~ ${STEPS:-.} ]] && step "$@"; return 0; }

# Several short runs in one file, each headed by its "$ " line (the chapter quotes them by it).
runs() {
    local c status=0
    for c in "$@"; do echo; echo "\$ $c"; eval "$c" || status=1; done
    return $status
}
# Where the reference's TGN epoch goes: its first 40 s sampled by perf, the four largest functions.
perf_reference() {
    local record="timeout 40 perf record -o /tmp/perf.data build/twofold train --model tgn --data wikipedia --epochs 1"
    local report="perf report -i /tmp/perf.data --no-children --stdio | grep -E \"^ +[0-9]\" | head -4"
    echo "\$ $record"
    eval "$record" > /dev/null 2>&1
    [ $? -eq 124 ] || return 1 # the run is cut at 40 s on purpose
    echo "\$ $report"
    eval "$report"
    return 0 # head ends perf report early (SIGPIPE), which pipefail would call a failure
}
twin="mpiexec -n 1 build/twofold train --impl opt"

run $out/events_idea_figure.txt python3 chapters/01b-event-models-idea.py chapters/01b-event-models-idea.svg
run $out/events_commands.txt bash verify/chapter_commands.sh build chapters/01b-event-models.md
run $out/events_tgn_wikipedia.txt $twin --model tgn --data wikipedia --save "$saved/tgn_wikipedia"
run $out/events_jodie_wikipedia.txt build/twofold train --model jodie --data wikipedia
run $out/events_perf_reference.txt perf_reference
run $out/events_lockstep.txt mpiexec -n 2 --oversubscribe build/verify/test_dispatch_mpi
run $out/events_rules.txt runs "$twin --model tgn --data wikipedia --memory-update vertex" \
    "$twin --model jodie --data wikipedia --memory-update entry" \
    "$twin --model jodie --data wikipedia --memory-update vertex"
run $out/events_profile.txt $twin --model tgn --data wikipedia --epochs 1 --profile
run $out/events_profile_jodie.txt $twin --model jodie --data wikipedia --epochs 1 --profile
run $out/events_destinations.txt runs "build/twofold train --model jodie --data wikipedia --negatives destinations" \
    "$twin --model tgn --data wikipedia --negatives destinations"
run $out/events_streams.txt runs "build/twofold train --model jodie --data collegemsg" \
    "build/twofold train --model jodie --data enron" \
    "build/twofold train --model jodie --data bitcoin_otc" \
    "build/twofold train --model jodie --data bitcoin_alpha" \
    "$twin --model tgn --data collegemsg" \
    "$twin --model tgn --data bitcoin_otc" \
    "$twin --model tgn --data bitcoin_otc --edge-features none"
run $out/events_tgn_wikipedia_replay.txt $twin --model tgn --data wikipedia --load "$saved/tgn_wikipedia"
run $out/events_apan.txt runs "$twin --model apan --data bitcoin_alpha" \
    "$twin --model apan --data bitcoin_otc" \
    "$twin --model apan --data collegemsg"
run $out/events_tgl_widths.txt $twin --model tgn --data wikipedia --memory-dim 100 --time-dim 100 \
    --embedding-dim 100 --lr 1e-4 --batch 600 --epochs 1
run $out/events_apan_wikipedia.txt $twin --model apan --data wikipedia
run $out/events_race.txt bench/train_events.sh all wikipedia 3
finish
