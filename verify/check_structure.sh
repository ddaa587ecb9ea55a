#!/usr/bin/env bash
# The layout rules a reader relies on, checked over the source tree (no build needed). Run from the
# repository root: verify/check_structure.sh. Prints one line per violation, naming the file (and
# line), and exits 1 if there is any; prints what it checked and exits 0 otherwise.
#
#  1. Twins pair by name: every opt/*.h and cuda/*.h names, within its first 5 lines, the ref/
#     function(s) it twins, as " * Twins: ref_aggregate() (ref/incremental.h)." or, for a header
#     that twins nothing, " * Twins: none — what it is instead." Every ref/ header the line names
#     exists, and every function it names as name() is declared in one of them, so a rename that
#     forgets the line fails here.
#  2. Dependencies run one way: nothing outside bench/ includes a bench/ header, and bench/ never
#     includes the program's own files (opt/cli/).
#  3. No issue numbers: a reader of the repository cannot look an issue up, so code, tests and
#     prose say what the issue explained (bench/results/ is historical output and exempt).
#  4. No function a reader must scroll: at most 80 lines in opt/cli/, 120 in ref/, opt/, cuda/
#     and datasets/. A function runs from a line that is exactly "{" to the next line that is
#     exactly "}"; its length is the difference of their line numbers.
#  5. The site lists every chapter in reading order: each chapters/*.md is linked from
#     docs/mainpage.md and named in docs/Doxyfile.in's INPUT (whose order is the Related Pages').
#  6. The prose names no file that is not there: every repository path in backticks in the
#     chapters (their Files tables included), the README and verify/ERRORS.md exists.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

violations=0
violation() {
    echo "check_structure: $*"
    violations=$((violations + 1))
}

# The files of the tree: tracked and new ones, not what .gitignore leaves out (build folders);
# outside a git checkout, every file but the build folders.
list_files() {
    if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
        git ls-files --cached --others --exclude-standard -- "$@"
    else
        local patterns=() pattern
        for pattern in "$@"; do patterns+=(-o -path "./$pattern"); done
        find . -path './build*' -prune -o -type f \( -false "${patterns[@]}" \) -print | sed 's|^\./||'
    fi | sort -u | while read -r file; do [ -f "$file" ] && echo "$file"; done
}

# ---- 1. every opt/ and cuda/ header names what it twins ----------------------------------------
headers=0
while read -r header; do
    headers=$((headers + 1))
    twins=$(head -n 5 "$header" | grep -m 1 '^ \* Twins: ')
    if [ -z "$twins" ]; then
        violation "$header: no ' * Twins: ' line in its first 5 lines (name the ref/ function(s) it twins, or 'Twins: none — what it is')"
        continue
    fi
    named=$(grep -o 'ref/[A-Za-z0-9_/]*\.h' <<< "$twins" | sort -u)
    if [ -z "$named" ]; then
        grep -q '^ \* Twins: none — ' <<< "$twins" ||
            violation "$header: its Twins line names no ref/ header and does not say 'Twins: none — ...'"
        continue
    fi
    for ref_header in $named; do
        [ -f "$ref_header" ] || violation "$header: its Twins line names $ref_header, which does not exist"
    done
    for function in $(grep -o '[A-Za-z_][A-Za-z0-9_]*()' <<< "$twins" | tr -d '()' | sort -u); do
        found=0
        for ref_header in $named; do
            [ -f "$ref_header" ] && grep -q "\\b$function(" "$ref_header" && found=1
        done
        [ "$found" = 1 ] ||
            violation "$header: its Twins line names $function(), which none of ${named//$'\n'/, } declares"
    done
done < <(list_files 'opt/*.h' 'cuda/*.h' | grep -E '^(opt|cuda)/[^/]+\.h$')

# ---- 2. includes run one way ----------------------------------------------------------------------
mapfile -t outside_bench < <(list_files '*.c' '*.h' '*.cu' '*.cuh' '*.cc' '*.cpp' | grep -v '^bench/')
mapfile -t in_bench < <(list_files 'bench/*.c' 'bench/*.h' 'bench/*.cu')
include='^[[:space:]]*#[[:space:]]*include[[:space:]]*"'
while IFS=: read -r file line _; do
    violation "$file:$line: includes a bench/ header; the benchmarks depend on the rest, never the reverse"
done < <(grep -E -n "${include}bench/" "${outside_bench[@]}" /dev/null)
while IFS=: read -r file line _; do
    violation "$file:$line: a benchmark includes the program's own opt/cli/ header"
done < <(grep -E -n "${include}opt/cli/" "${in_bench[@]}" /dev/null)

# ---- 3. no issue numbers outside bench/results/ ---------------------------------------------------
mapfile -t texts < <(list_files '*.c' '*.h' '*.cu' '*.md' '*.sh' '*.txt' '*.cmake' '*.py' '*.in' '*.gp' '*.awk' \
                                 '.ci/*' | grep -v '^bench/results/')
while IFS=: read -r file line text; do
    violation "$file:$line: cites an issue number; say what it explained, or point to a verify/ERRORS.md row: ${text:0:100}"
done < <(grep -E -n -i 'issues? #?[0-9]|(^|[ (])#[0-9]{1,4}\b' "${texts[@]}" /dev/null)
while read -r file; do
    violation "$file: a file name that names an issue; name it after what it holds"
done < <(list_files '*' | grep -i 'issue[-_ ]*[0-9]')

# ---- 4. function lengths --------------------------------------------------------------------------
functions_over() {   # limit files...
    local limit=$1
    shift
    [ $# -gt 0 ] || return 0
    awk -v limit="$limit" '
        FNR == 1     { start = 0 }
        $0 == "{"    { start = FNR }
        $0 == "}" && start {
            if (FNR - start > limit)
                printf "%s:%d: a function of %d lines (at most %d here)\n", FILENAME, start, FNR - start, limit
            start = 0
        }' "$@"
}
mapfile -t cli < <(list_files 'opt/cli/*.c' 'opt/cli/*.h')
mapfile -t library < <(list_files '*.c' '*.h' '*.cu' | grep -E '^(ref|opt|cuda|datasets)/' | grep -v '^opt/cli/')
while read -r message; do
    [ -n "$message" ] && violation "$message"
done < <(functions_over 80 "${cli[@]}"; functions_over 120 "${library[@]}")

# ---- 5. every chapter on the site's main page and in Doxygen's INPUT --------------------------------
chapters=0
while read -r chapter; do
    chapters=$((chapters + 1))
    grep -q -F "(../$chapter)" docs/mainpage.md ||
        violation "$chapter: not linked from docs/mainpage.md's list of chapters"
    grep -q -F "@PROJECT_SOURCE_DIR@/$chapter " docs/Doxyfile.in ||
        violation "$chapter: not in docs/Doxyfile.in's INPUT (the site would leave it out)"
done < <(list_files 'chapters/*.md')

# ---- 6. every file the prose names exists ------------------------------------------------------------
# A path in backticks in a chapter, the README or verify/ERRORS.md that starts with one of the
# project's folders (`opt/dispatch.c`, `verify/techniques/engine.h`) must name a file or folder of
# the tree, so the Files tables and the text follow a file that moves. Paths with a wildcard or a
# brace ({h,c}) or a placeholder in capitals (`opt/X`, `ref/GROUP/X`) are patterns, not files.
named=0
while IFS=: read -r file line path; do
    named=$((named + 1))
    [ -e "$path" ] || violation "$file:$line: names \`$path\`, which is not in the tree"
done < <(grep -o -n -E '`(ref|opt|cuda|verify|bench|datasets|docs|chapters)/[A-Za-z0-9_./-]*`' \
             $(list_files 'chapters/*.md') README.md verify/ERRORS.md /dev/null |
         tr -d '`' | grep -v -E '[*{]|/[A-Z_]+(\.[a-z]+)?(/|$)' | sed -E 's|/$||')

if [ "$violations" -gt 0 ]; then
    echo "check_structure: $violations violation(s)"
    exit 1
fi
echo "check_structure: $headers opt/ and cuda/ headers name their twins; includes run one way;" \
     "no issue numbers; no function over 80 lines in opt/cli/ or over 120 elsewhere;" \
     "the $chapters chapters on the site's main page; the $named paths the prose names exist"
