#!/usr/bin/env bash
# The chapters' commands are true (verify/chapter_commands.sh on every chapter and the README),
# and the check can fail: a copy of chapter 00 with one shown output line changed by hand, as a
# stale block would be, is caught, naming the line; so is one changed line of a block that quotes a
# committed output file (chapter 01, event models).
#   verify/test_chapter_commands.sh BUILD_DIR
set -uo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bash "$here/chapter_commands.sh" "$build_dir" || { echo "test_chapter_commands: a chapter's block is stale (above)"; exit 1; }

shown='vertices        20'
grep -q "^$shown\$" "$root/chapters/00-overview.md" || { echo "test_chapter_commands: chapter 00 no longer shows \"$shown\""; exit 1; }
sed "s/^$shown\$/vertices        21/" "$root/chapters/00-overview.md" > "$work/00-overview.md"
bash "$here/chapter_commands.sh" "$build_dir" "$work/00-overview.md" > "$work/out.txt" 2>&1
status=$?
sed 's/^/  edited copy: /' "$work/out.txt" | grep -v '^  edited copy:         |'
if [ "$status" -ne 1 ] || ! grep -q 'FAILED .*not found in order: vertices        21' "$work/out.txt"; then
    echo "test_chapter_commands: the line changed by hand was not caught (exit $status)"
    exit 1
fi
# The same for a block tied to committed output: one digit of chapter 01's quoted profile.
quoted='  dense              14524 '
grep -q "^$quoted" "$root/chapters/01-models-events.md" || { echo "test_chapter_commands: chapter 01 (events) no longer quotes \"$quoted\""; exit 1; }
sed "s/^$quoted/  dense              14525 /" "$root/chapters/01-models-events.md" > "$work/01-models-events.md"
bash "$here/chapter_commands.sh" "$build_dir" "$work/01-models-events.md" > "$work/out.txt" 2>&1
quoted_status=$?
sed 's/^/  edited copy: /' "$work/out.txt"
if [ "$quoted_status" -ne 1 ] || ! grep -q 'FAILED .*(output in .*not found in order: *dense *14525' "$work/out.txt"; then
    echo "test_chapter_commands: the quoted line changed by hand was not caught (exit $quoted_status)"
    exit 1
fi
echo "test_chapter_commands: every block holds; the lines changed by hand are caught (exit $status and $quoted_status)"
