#!/usr/bin/env bash
# Chapter 00's output blocks are all quick: its run blocks, run again and compared line by line
# (the same check ctest's test_chapter_commands makes); and its picture, redrawn.
# takes: under a minute
set -uo pipefail
. "$(dirname "$0")/common.sh"
step bench/results/00-overview/commands.txt bash verify/chapter_commands.sh build chapters/00-overview.md
step bench/results/00-overview/idea.txt python3 chapters/00-overview-idea.py chapters/00-overview-idea.svg
finish
