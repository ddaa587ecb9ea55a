#!/usr/bin/env bash
# The chapters' commands are true (verify/chapter_commands.sh on every chapter and the README),
# and the check can fail. Two blocks written here, apart from any chapter so that rewriting a
# chapter cannot take the check's teeth: a run block showing what `twofold info chickenpox`
# prints, and a block quoting lines of a committed output file. Each holds as written; with one
# shown digit changed by hand, as a stale block would have it, each must fail, naming the line.
#   verify/test_chapter_commands.sh BUILD_DIR
set -uo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bash "$here/chapter_commands.sh" "$build_dir" || { echo "test_chapter_commands: a chapter's block is stale (above)"; exit 1; }

# 1. A run block: the command's own output, then the same with its "vertices" line changed.
"$build_dir/twofold" info chickenpox > "$work/info.txt" 2>&1 || { echo "test_chapter_commands: twofold info failed"; exit 1; }
grep -q '^vertices  *20$' "$work/info.txt" || { echo "test_chapter_commands: twofold info no longer prints \"vertices 20\""; exit 1; }
run_block() { # $1: the vertices count to show
    printf '<!-- run -->\n```\n$ build/twofold info chickenpox\n'
    grep -E '^(dataset|vertices|snapshots) ' "$work/info.txt" | sed "s/^vertices .*/vertices        $1/"
    printf '```\n'
}
# 2. A quoted block: three lines of a committed file, then the same with a digit changed.
source=bench/results/01-models/verify_matrix.txt
[ -f "$root/$source" ] || { echo "test_chapter_commands: $source is gone: quote another committed file here"; exit 1; }
grep -m3 '[0-9]' "$root/$source" > "$work/quoted.txt"
[ "$(wc -l < "$work/quoted.txt")" -eq 3 ] || { echo "test_chapter_commands: $source has fewer than 3 lines with digits"; exit 1; }
quoted_block() { # $1: sed expression applied to the quoted lines
    printf '<!-- output in %s -->\n```\n' "$source"
    sed -E "$1" "$work/quoted.txt"
    printf '```\n'
}
changed_digit='3s/([0-9])/\1\1/'
sed -E "$changed_digit" "$work/quoted.txt" | cmp -s - "$work/quoted.txt" && { echo "test_chapter_commands: the edit changed nothing"; exit 1; }

expect() { # $1: name, $2: expected status, $3: the failure line expected (when 1); the chapter on stdin
    cat > "$work/$1.md"
    bash "$here/chapter_commands.sh" "$build_dir" "$work/$1.md" > "$work/$1.out" 2>&1
    local status=$?
    sed "s/^/  $1: /" "$work/$1.out" | grep -v "^  $1:         |"
    if [ "$status" -ne "$2" ] || { [ "$2" -eq 1 ] && ! grep -q -- "$3" "$work/$1.out"; }; then
        echo "test_chapter_commands: $1 exited $status, expected $2${3:+ with \"$3\"}"
        exit 1
    fi
}
run_block 20 | expect run-as-printed 0
run_block 21 | expect run-changed 1 'FAILED .*not found in order: vertices        21'
quoted_block 's/x/x/' | expect quoted-as-committed 0
quoted_block "$changed_digit" | expect quoted-changed 1 'FAILED .*(output in .*not found in order'
printf '```\n$ build/twofold info chickenpox\n```\n' | expect unmarked 1 'needs <!-- run --> or <!-- output in FILE -->'
echo "test_chapter_commands: every block holds; the lines changed by hand and the unmarked block are caught"
