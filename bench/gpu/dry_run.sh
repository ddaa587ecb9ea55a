#!/usr/bin/env bash
# bench/gpu/dry_run.sh [STEP...]: bench/gpu/run.sh on THIS machine (Debian, as root) with the system's
# own copies of the carried packages hidden, so that the build can only succeed against the
# prefix unpacked from .gpu-debs/. In a private mount namespace (unshare -m), every file those
# packages installed under /usr/lib, /usr/include and /usr/bin is covered by /dev/null (an empty,
# non-executable file: a header that is still read compiles to nothing, a library still linked
# fails); the covers vanish with the namespace and nothing on disk changes. Without a GPU the cuda
# tests skip (77) and the sanitizer and benchmark steps say "no GPU". JOBS (default 2), OUT (default
# a fresh temporary folder), BUDGET and LIMIT_STEP are passed on.
set -eu
cd "$(dirname "$0")/../.."
packages=$(sed -n "/^main='/,/'\$/p" bench/gpu/prepare.sh | tr -d "'" | sed 's/^main=//')
hide=$(mktemp)
for p in $packages; do
    dpkg -L "$p" 2>/dev/null || true
done | while read -r f; do
    case $f in /usr/lib/* | /usr/include/* | /usr/bin/* | /lib/*) if [ -f "$f" ] && [ ! -L "$f" ]; then echo "$f"; fi ;; esac
done > "$hide"
echo "dry_run.sh: hiding $(wc -l < "$hide") files of: $packages"
export OUT=${OUT:-$(mktemp -d)} JOBS=${JOBS:-2}
# Two shared cores build for far longer than the GPU machine's sixteen: no budget, no build limit.
export BUDGET=${BUDGET:-100000} LIMIT_build=${LIMIT_build:-7200}
unshare -m bash -c '
    mount --make-rprivate /
    while read -r f; do mount --bind /dev/null "$f"; done < "$0"
    echo "hidden; e.g. mpicc: $(command -v mpicc.openmpi mpicc || echo none), check.h: $(wc -c < /usr/include/check.h) bytes"
    exec bench/gpu/run.sh "${@}"' "$hide" "$@"
rm -f "$hide"
echo "dry_run.sh: OUT=$OUT: $(ls "$OUT")"
