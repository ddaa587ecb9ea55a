#!/usr/bin/env bash
# Every number of a chapter, regenerated: bench/reproduce.sh NN runs bench/reproduce/NN*.sh (chapter
# 01's two parts, 01a and 01b, are both "01"; a part alone by its full name, e.g. 06b), from the
# repository root after the README's build. Each script writes every output block and figure of its
# chapter into bench/results/NN-*/, one file per step, each headed by the date, the commit, the
# machine and its load, and the command ("$ ..."), which is what the chapters quote and what
# verify/chapter_commands.sh checks them against.
#
#   bench/reproduce.sh NN|NNx|all      (each script's first lines say how long it takes)
#   bench/reproduce.sh --list          the scripts and their durations
#   REPRODUCE_SKIP_LONG=1 bench/reproduce.sh NN   only the steps that take minutes, not hours (the
#                                      long ones are named, and their committed files left as they are)
#
# Exits 1 when a step fails (its name and log's last line printed, the other steps still run), 2 on
# a usage error.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
usage() { echo "usage: bench/reproduce.sh NN|NNx|all|--list (chapters: $(cd bench/reproduce && ls [0-9]*.sh | sed 's/\.sh$//' | tr '\n' ' '))" >&2; exit 2; }
[ $# -eq 1 ] || usage
case $1 in
--list)
    for s in bench/reproduce/[0-9]*.sh; do printf '%-8s %s\n' "$(basename "$s" .sh)" "$(sed -n 's/^# takes: //p' "$s")"; done
    exit 0 ;;
all) scripts=(bench/reproduce/[0-9]*.sh) ;;
[0-9][0-9]|[0-9][0-9][a-z]) scripts=(bench/reproduce/"$1"*.sh) ;;
*) usage ;;
esac
[ -f "${scripts[0]}" ] || { echo "bench/reproduce.sh: no script for chapter $1" >&2; usage; }
[ -x build/twofold ] || { echo "bench/reproduce.sh: build/twofold not found: build first (README, \"Build\")" >&2; exit 2; }
status=0
for s in "${scripts[@]}"; do
    echo "== $(basename "$s" .sh) ($(sed -n 's/^# takes: //p' "$s"))"
    bash "$s" || status=1
done
exit $status
