#!/usr/bin/env bash
# Pictures of the rendered chapter pages, to look at before a change to the chapters lands: does
# every equation render, every figure show, no run of monospace stand where prose was meant?
# Each page of the built site (cmake --build build --target docs) is printed by headless Chromium
# after MathJax has run, and each printed page becomes one PNG.
#
#   docs/screenshots.sh BUILD_DIR OUT_DIR [NAME...]   (NAME: a chapter file's stem, e.g. 02-incremental;
#                                                      default: every chapter)
# Needs chromium and pdftoppm (Debian: chromium, poppler-utils). Prints one line per chapter: its
# PDF pages, and the PNGs written.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR [NAME...]" >&2; exit 2; }
html=$1/docs/html
out=$2
shift 2
for tool in chromium pdftoppm; do
    command -v "$tool" > /dev/null || { echo "$0: $tool not found (apt-get install chromium poppler-utils)" >&2; exit 2; }
done
[ -d "$html" ] || { echo "$0: $html not found: build the site first (cmake --build BUILD_DIR --target docs)" >&2; exit 2; }
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
names=("$@")
[ ${#names[@]} -gt 0 ] || for f in "$root"/chapters/*.md; do names+=("$(basename "$f" .md)"); done
status=0
for name in "${names[@]}"; do
    page=$html/md_chapters_$(echo "$name" | tr -- '-' '_').html
    [ -f "$page" ] || { echo "$name: no page $page"; status=1; continue; }
    chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=20000 --no-pdf-header-footer \
        --print-to-pdf="$out/$name.pdf" "file://$(cd "$(dirname "$page")" && pwd)/$(basename "$page")" > /dev/null 2>&1
    [ -s "$out/$name.pdf" ] || { echo "$name: chromium printed nothing"; status=1; continue; }
    pdftoppm -r 70 -png "$out/$name.pdf" "$out/$name"
    echo "$name: $(ls "$out/$name"-*.png | wc -l) page(s) in $out/$name-*.png"
done
exit $status
