#!/usr/bin/env bash
# --memory-limit is a budget for the whole run: a run either fits or stops with one line and
# exit 2, and its peak resident set never passes the limit by more than the stated margin
# (ref/core/memory.h, chapters/00-overview.md). Each run goes through peak_rss, which prints the
# kernel's own high-water mark (wait4's ru_maxrss), so a short peak cannot be missed.
#
# The program's resident size before it allocates any data (its libraries: OpenBLAS's buffers,
# MPI, CUDA's runtime where built in) is not data and differs from machine to machine, so it is
# measured here, as the peak of `twofold --help`, and allowed on top of the limit:
#     peak <= start-up footprint + limit + MARGIN
# Usage: test_memory_budget.sh TWOFOLD PEAK_RSS
set -u
twofold=$1 peak_rss=$2
margin_mib=16 # the stated margin: malloc's free-but-kept pages, scratch outside the budget
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# run NAME ARG...: runs twofold under peak_rss; sets status, peak_kib and message (the last
# line twofold wrote on stderr).
run() {
    local name=$1
    shift
    "$peak_rss" "$twofold" "$@" > "$work/$name.out" 2> "$work/$name.err"
    status=$?
    peak_kib=$(sed -n 's/^peak_rss: \([0-9]*\) KiB$/\1/p' "$work/$name.err")
    message=$(grep -v '^peak_rss: ' "$work/$name.err" | tail -1)
}

run baseline --help
baseline_kib=$peak_kib
echo "start-up footprint (peak of twofold --help): $((baseline_kib / 1024)) MiB; margin allowed: $margin_mib MiB"

# expect NAME LIMIT_MIB WANT_STATUS WANT_TEXT ARG...: twofold --memory-limit LIMIT ARG... must
# end with WANT_STATUS (0, or 2 with WANT_TEXT in its one stderr line) and peak within bounds.
expect() {
    local name=$1 limit_mib=$2 want_status=$3 want_text=$4
    shift 4
    run "$name" --memory-limit "${limit_mib}M" "$@"
    local bound_kib=$((baseline_kib + (limit_mib + margin_mib) * 1024))
    local over_kib=$((peak_kib - baseline_kib))
    echo "$name: --memory-limit ${limit_mib}M: exit $status, peak RSS $((peak_kib / 1024)) MiB" \
         "= footprint + $((over_kib / 1024)) MiB (bound: footprint + $((limit_mib + margin_mib)) MiB)"
    [ -n "$message" ] && echo "    $message"
    if [ "$status" -ne "$want_status" ]; then
        echo "FAILED: $name: exit status $status, expected $want_status"; failed=1
    fi
    if [ "$want_status" -eq 2 ] && { [ "$(grep -vc '^peak_rss: ' "$work/$name.err")" -ne 1 ] ||
                                     ! grep -qF -- "$want_text" "$work/$name.err"; }; then
        echo "FAILED: $name: expected one stderr line containing '$want_text'"; failed=1
    fi
    if [ "$peak_kib" -gt "$bound_kib" ]; then
        echo "FAILED: $name: peak RSS passes the limit by more than $margin_mib MiB"; failed=1
    fi
}

# 1. verify/ERRORS.md's first case, scaled to seconds: T-GCN's tape on a generated power-law
#    graph needs about 110 MiB over the footprint here; each allocation alone is small, so a
#    limit that capped single allocations let all of them through.
tgcn=(train --model tgcn --data powerlaw:nodes=3000,edges=1e4,snapshots=20 --hidden 64 --epochs 1)
expect tgcn_over 32 2 "over the --memory-limit of 32.0 MiB" "${tgcn[@]}"
expect tgcn_over_opt 32 2 "over the --memory-limit of 32.0 MiB" "${tgcn[@]}" --impl opt
#    The same run under a limit it just fits in (160M is too little) still runs.
expect tgcn_fits 192 0 "" "${tgcn[@]}"

# 2. A small gzip of "[0,0,0,...]": 4 MB of text, a cJSON tree of about 160 MiB (80 bytes a
#    node). The parse stops at the limit and says so, naming the file, instead of "malformed".
{ printf '['; yes '0,' | head -n 2000000 | tr -d '\n'; printf '0]'; } | gzip -c > "$work/zeros.json.gz"
echo "zeros.json.gz: $(stat -c %s "$work/zeros.json.gz") bytes of gzip"
expect json_zeros 64 2 "zeros.json.gz: too large for memory: parsing its" info "$work/zeros.json.gz"

# 3. A limit under 1M (0.5 bytes would round to 0, which means none) is refused.
run half --memory-limit 0.5 info chickenpox
echo "half: --memory-limit 0.5: exit $status: $message"
if [ "$status" -ne 2 ] || [[ "$message" != *"expected a size of at least 1M"* ]]; then
    echo "FAILED: --memory-limit 0.5 must be refused with exit 2"; failed=1
fi

exit $failed
