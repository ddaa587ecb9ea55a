#!/usr/bin/env bash
# The commands the chapters show stay true as the code moves. Every fenced block of the chapters and
# the README whose first line is a command ("$ build/twofold ...", "$ mpiexec ...", "$ bench/...",
# "$ ctest ...") carries a mark on the line just before its opening fence, and so does every block
# that shows output without its command; the mark is one of
#
#   <!-- run -->              quick: each "$ " command of the block (a line ending in "\" goes on
#                             to the next) runs here, from the repository root, with "build/"
#                             meaning BUILD_DIR; every other line of the block must appear in what
#                             the commands print (stdout and stderr), in the same order;
#   <!-- output in FILE -->   long: the block quotes the committed output FILE (a path under
#                             bench/results/, whose header names the command or script that
#                             writes it); every line of the block, commands included, must appear
#                             in FILE in the same order.
#
# "Appear" allows lines of the output between the shown ones (a block may leave lines out) but no
# change to a shown line (a line that is only "..." says where lines were left out), except what is masked on both sides before comparing: times (a number
# followed by s, ms or min), ISO dates and clock times, and runs of spaces (one space). An
# ellipsis "…" in a shown line stands for any text (a path prefix, a number that depends on the
# build). A block that starts with "$ " and has no mark fails: a new command in a chapter is
# either run or tied to its committed output. (Blocks of code, equations or file formats need no
# mark; an output block without its "$ " line is checked when it is marked.)
#
#   verify/chapter_commands.sh BUILD_DIR [FILE...]     (default: chapters/*.md and README.md)
#
# Prints one line per block (file:line, its mark, ok or the first shown line not found) and exits 1
# if any block fails, 2 on a usage error.
set -uo pipefail

[ $# -ge 1 ] && [ -d "$1" ] || { echo "usage: $0 BUILD_DIR [FILE...] (BUILD_DIR: the build folder, holding twofold)" >&2; exit 2; }
build_dir=$(cd "$1" && pwd)
shift
root=$(cd "$(dirname "$0")/.." && pwd)
files=()
for f in "$@"; do files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); done
cd "$root" || exit 2
[ ${#files[@]} -gt 0 ] || files=(chapters/*.md README.md)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Masks what may change from one run to the next, the same way on both sides.
mask() {
    sed -E -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}/<date>/g' -e 's/[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?/<clock>/g' \
        -e 's/[0-9]+(\.[0-9]+)? ?(ms|min|s)([^A-Za-z0-9_]|$)/<time>\3/g' -e 's/[[:space:]]+/ /g' -e 's/ $//'
}

# A command line as a results file's header writes it ("# command: CMD") is "$ CMD", and a note
# after a command, two spaces and a parenthesis on, is not part of it.
commands_as_shown() {
    sed -E -e 's/^# command: /$ /' -e '/^\$ /s/  +\(.*$//'
}

# Shown lines (masked) to extended regular expressions, one per line: escaped, "…" any text; a
# line that is only "..." or "…" marks lines left out, and blank lines are layout: neither is
# compared.
to_patterns() {
    commands_as_shown | mask | sed -E -e '/^ ?(\.\.\.|…)?$/d' -e 's/[][\.^$*+?(){}|]/\\&/g' -e 's/…/.*/g' -e 's/^/^/' -e 's/$/$/'
}

# The shown lines that are compared, unmasked, in the order of to_patterns()'s patterns.
compared() {
    grep -Ev '^[[:space:]]*(\.\.\.|…)?[[:space:]]*$' "$1"
}

# 0 when every pattern of $1 matches a line of $2, in order; else prints the first shown line not
# found (from $3, the unmasked shown lines) and returns 1.
in_order() {
    local patterns=$1 text=$2 shown=$3 n=0 pattern line
    local -a lines
    mapfile -t lines < "$text"
    local i=0 count=${#lines[@]}
    while IFS= read -r pattern; do
        n=$((n + 1))
        while [ "$i" -lt "$count" ]; do
            line=${lines[$i]}
            i=$((i + 1))
            if [[ $line =~ $pattern ]]; then continue 2; fi
        done
        echo "shown line $n not found in order: $(sed -n "${n}p" "$shown")"
        return 1
    done < "$patterns"
    return 0
}

# Compares the shown lines of file $3 (a block's, or its output part's) with the text on stdin, and
# prints one line for block $1 checked as $2; counts a failure and returns 1 when one is missing.
check_block() {
    local where=$1 how=$2 shown=$3 why
    mask > "$work/printed.masked"
    to_patterns < "$shown" > "$work/patterns"
    compared "$shown" > "$work/compared"
    if why=$(in_order "$work/patterns" "$work/printed.masked" "$work/compared"); then
        echo "ok      $where ($how, $(wc -l < "$work/compared") shown line(s) found)"
        return 0
    fi
    echo "FAILED  $where ($how): $why"
    failed=$((failed + 1))
    return 1
}

# Each block to $work/block.N.{where,mark,lines}: the file:line of its fence, the mark, its lines.
failed=0
blocks=0
for file in "${files[@]}"; do
    awk -v file="${file#"$root"/}" -v dir="$work" -v start="$blocks" '
        function flush() { if (keep) { n++; print file ":" line > (dir "/block." n ".where"); print mark > (dir "/block." n ".mark") } }
        BEGIN { n = start }
        /^```/ {
            if (!inside) { inside = 1; first = 1; keep = 0; line = FNR; mark = previous; next }
            inside = 0; flush(); close(dir "/block." n ".lines"); next
        }
        inside && first { first = 0; keep = ($0 ~ /^\$ / || mark == "<!-- run -->" || mark ~ /^<!-- output in /) }
        inside && keep { print > (dir "/block." (n + 1) ".lines") }
        !inside && NF { previous = $0 }
        END { print n > (dir "/count") }' "$file"
    blocks=$(cat "$work/count")
done

for n in $(seq 1 "$blocks"); do
    where=$(cat "$work/block.$n.where")
    mark=$(cat "$work/block.$n.mark")
    lines=$work/block.$n.lines
    case $mark in
    '<!-- run -->')
        # Commands: "$ " lines and their "\" continuations; the rest is the output shown.
        awk '/^\$ / || cont { sub(/^\$ /, ""); print > cmd; cont = /\\$/; next } { print > out }' \
            cmd="$work/cmd" out="$work/shown" "$lines"
        touch "$work/shown"
        sed -i -E 's#(^|[ ;&|(])build/#\1'"$build_dir"'/#g' "$work/cmd"
        (cd "$root" && bash "$work/cmd") > "$work/printed" 2>&1
        if ! check_block "$where" "run" "$work/shown" < "$work/printed"; then
            echo "        what the commands printed:"
            sed 's/^/        | /' "$work/printed" | head -40
        fi
        rm -f "$work/cmd" "$work/shown"
        ;;
    '<!-- output in '*' -->')
        source=${mark#'<!-- output in '}
        source=${source%' -->'}
        if [[ $source != bench/results/* ]] || [ ! -f "$source" ]; then
            echo "FAILED  $where: its output file $source is not a file under bench/results/"
            failed=$((failed + 1))
            continue
        fi
        check_block "$where" "output in $source" "$lines" < <(commands_as_shown < "$source")
        ;;
    *)
        echo "FAILED  $where: a block starting with \"\$ \" needs <!-- run --> or <!-- output in FILE --> on the line before its fence"
        failed=$((failed + 1))
        ;;
    esac
done
echo "chapter commands: $blocks block(s), $failed failed"
[ "$failed" -eq 0 ]
