#!/usr/bin/env bash
# bench/gpu/run.sh [STEP...]: the whole GPU bring-up in one call, on a machine with nvcc, CMake,
# ninja, compute-sanitizer and PyTorch but no Open MPI, Check, OpenBLAS, GLPK, METIS or cJSON and
# no network (bench/gpu/README.md). Run in the repository root with .gpu-debs/ (and .whl/) carried
# from bench/gpu/prepare.sh.
#
# Steps, in order (no STEP: all of them): unpack build ctest memcheck racecheck initcheck synccheck
# bench race. Naming steps reruns only those; unpack and build run first whenever a later step
# needs them and their output is missing (a fresh machine keeps nothing).
#
# Each step runs under its own `timeout`, writes LOGS/STEP.log, and adds one line to
# OUT/summary.txt (passed / failed (status) / timed out / skipped, seconds); a step that fails does
# not stop the others. The whole run keeps inside BUDGET seconds (default 540): a step gets at most
# what is left, and one that cannot start in time is skipped and says so. LIMIT_STEP=SECONDS
# overrides one step's limit (a slower machine, a dry run). At the end the logs are
# packed into OUT/logs.tar.gz (OUT defaults to .gpu-out/; the device tool's $OUT when set).
set -u
cd "$(dirname "$0")/../.."
root=$PWD
prefix=${GPU_PREFIX:-$root/.gpu-prefix}
build=${GPU_BUILD:-$root/.gpu-build}
out=${OUT:-$root/.gpu-out}
logs=$out/logs
jobs=${JOBS:-$(nproc)}
budget=${BUDGET:-540}
started=$(date +%s)
mkdir -p "$logs"
summary=$out/summary.txt

# ---- the carried prefix ------------------------------------------------------------------------
usr=$prefix/usr
arch=$usr/lib/x86_64-linux-gnu
# Open MPI relocated: OPAL_PREFIX makes its wrappers and mpiexec look under the prefix for their
# libraries, components and help files; Debian's installed names carry an .openmpi suffix (the
# plain names are alternatives that dpkg -x does not make), so the build is told them.
export OPAL_PREFIX=$usr
export PATH=$usr/bin:$PATH:/usr/local/cuda/bin:/usr/local/cuda/compute-sanitizer
export LD_LIBRARY_PATH=$arch/openmpi/lib:$arch:$arch/openblas-pthread:$prefix/fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PKG_CONFIG_PATH=$arch/pkgconfig:$usr/share/pkgconfig
export CMAKE_PREFIX_PATH=$usr
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One machine, no network: Open MPI's shared-memory and self transports only.
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mtl=^ofi

step_unpack() {
    ls .gpu-debs/*.deb >/dev/null || { echo "no .gpu-debs/*.deb: run bench/gpu/prepare.sh here and carry .gpu-debs"; return 1; }
    rm -rf "$prefix" && mkdir -p "$prefix/fallback" || return 1
    for deb in .gpu-debs/*.deb; do dpkg -x "$deb" "$prefix" || return 1; done
    # Base libraries: keep a carried one only where the machine lacks that name.
    local scratch=$prefix/fallback-debs lib
    mkdir -p "$scratch"
    for deb in .gpu-debs/fallback/*.deb; do dpkg -x "$deb" "$scratch" || return 1; done
    for lib in "$scratch"/usr/lib/x86_64-linux-gnu/*.so.* "$scratch"/lib/x86_64-linux-gnu/*.so.*; do
        [[ $lib =~ \.so\.[0-9]+$ ]] || continue # the soname link; its target comes along (cp -L)
        if ldconfig -p | grep -q "^[[:space:]]*${lib##*/} "; then
            echo "fallback: ${lib##*/}: the machine has it"
        else
            echo "fallback: ${lib##*/}: carried copy used"; cp -L "$lib" "$prefix/fallback/"
        fi
    done
    rm -rf "$scratch"
    # pkg-config files say prefix=/usr (or libdir=/usr/...): point them at the prefix.
    sed -i "s|^\([a-z_]*\)=/usr|\1=$usr|" "$arch"/pkgconfig/*.pc
    # Absolute links (libz.so -> /lib/.../libz.so.1.2.13) name the packaging machine's files: point
    # each at the prefix's copy, else at the machine's library of the same soname.
    local link target so found
    find "$prefix" -type l -lname '/*' | while read -r link; do
        target=$(readlink "$link")
        if [ -e "$prefix$target" ]; then
            ln -sfn "$prefix$target" "$link"
        else
            so=$(basename "$target" | sed 's/\(\.so\.[0-9]*\).*/\1/')
            found=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')
            [ -n "$found" ] && ln -sfn "$found" "$link"
        fi
        echo "link: ${link#$prefix} -> $(readlink "$link")"
    done
    # The plain names Debian makes with update-alternatives (bench/train.sh calls mpiexec).
    local name
    for name in mpicc mpiexec mpirun; do ln -sfn "$name.openmpi" "$usr/bin/$name"; done
    du -sh "$prefix"
    mpicc.openmpi -showme && pkg-config --cflags --libs check libcjson
}

step_build() {
    nvcc --version | tail -1
    # The CUDA architectures are the project's own (CMakeLists.txt: sm_80 and sm_90, Hopper's).
    # Warnings are not errors here: another distribution's compiler may warn where CI's does not,
    # and one warning must not cost the call; they stay in build.log.
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTWOFOLD_WERROR=OFF \
        -DTWOFOLD_CUDA=ON -DTWOFOLD_FUZZ=OFF -DCMAKE_DISABLE_FIND_PACKAGE_Doxygen=ON \
        -DMPI_C_COMPILER="$usr/bin/mpicc.openmpi" -DMPIEXEC_EXECUTABLE="$usr/bin/mpiexec.openmpi" \
        -DOPENBLAS_LIBRARY="$arch/openblas-pthread/libopenblas.so" \
        -DOPENBLAS_INCLUDE_DIR="$usr/include/x86_64-linux-gnu/openblas-pthread" || return 1
    cmake --build "$build" -j "$jobs"
}

# The cuda-labelled tests, one per line: NAME<TAB>ENV (space-separated)<TAB>COMMAND (ctest's own).
cuda_tests() {
    ctest --test-dir "$build" -L cuda --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    env = [p["value"] for p in t.get("properties", []) if p["name"] == "ENVIRONMENT"]
    env = env[0] if env else []
    print(t["name"], " ".join(env), " ".join(t["command"]), sep="\t")'
}

step_ctest() {
    nvidia-smi || echo "no nvidia-smi: the cuda tests will skip (77)"
    ctest --test-dir "$build" -L cuda --output-on-failure --timeout 120
}

# One compute-sanitizer tool on every cuda test; each test's output in LOGS/TOOL/NAME.log.
sanitize() {
    local tool=$1 name env command rc failed=0 tests per options=()
    tests=$(cuda_tests) || return 1
    if ! command -v compute-sanitizer >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
        echo "would check:"; echo "$tests"
        command -v compute-sanitizer >/dev/null || { echo "no compute-sanitizer on PATH: nothing checked"; return 3; }
        echo "no GPU: nothing checked"; return 3
    fi
    mkdir -p "$logs/$tool"
    # Each test gets an equal share of the step's limit (PER_TEST seconds if set), so that one slow
    # test times out alone and the others still run.
    per=${PER_TEST:-$(( (STEP_CAP - 5) / $(wc -l <<< "$tests") ))}
    [ "$tool" = memcheck ] && options=(--leak-check full)
    while IFS=$'\t' read -r name env command; do
        # shellcheck disable=SC2086 # env and command are word lists
        env $env timeout -k 5 "$per" compute-sanitizer --tool "$tool" "${options[@]}" --error-exitcode 86 \
            --print-limit 50 $command > "$logs/$tool/$name.log" 2>&1
        rc=$?
        echo "$tool $name: exit $rc; $(grep -m1 'ERROR SUMMARY' "$logs/$tool/$name.log" || echo 'no summary')"
        [ $rc -eq 0 ] || failed=1
    done <<< "$tests"
    return $failed
}
step_memcheck() { sanitize memcheck; }
step_racecheck() { sanitize racecheck; }
step_initcheck() { sanitize initcheck; }
step_synccheck() { sanitize synccheck; }

# The CUDA benchmarks (bench/CMakeLists.txt): SpMM on the default generated graph and on one of
# 10^7 edges (generator spec), each validated before it is timed.
step_bench() {
    local rc=0
    "$build/bench/bench_propagate_cuda" || rc=1
    "$build/bench/bench_propagate_cuda" "${BIG_GRAPH:-powerlaw:nodes=1000000,edges=10000000,snapshots=1,seed=1}" 32 || rc=1
    # Without a GPU the benchmark says so and exits 0: that is no measurement.
    [ $rc -ne 0 ] || nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: the benchmarks only said so"; return 3; }
    return $rc
}

# The race against PyTorch Geometric Temporal (bench/train.sh). The peer's wheel from .whl/ goes
# into /tmp/gpu-site, never into the machine's Python; bench/train.sh sets PYTHONPATH to the shim
# alone, so PYTHON is a wrapper that adds the site. Without the peer, twofold's rows alone.
step_race() {
    local site=/tmp/gpu-site
    if ls .whl/*.whl >/dev/null 2>&1; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$site" .whl/*.whl || echo "the peer's wheel did not install: twofold's rows alone"
    else
        echo "no .whl/*.whl carried: twofold's rows alone"
    fi
    mkdir -p "$site" && printf '#!/bin/sh\nPYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}%s" exec python3 "$@"\n' "$site" > "$site/python3" &&
        chmod +x "$site/python3" || return 1
    PYTHON="$site/python3" TWOFOLD="$build/twofold" THREADS=${RACE_THREADS:-8} bench/train.sh tgcn twitter_tennis 5
}

all_steps='unpack build ctest memcheck racecheck initcheck synccheck bench race'
# Seconds each step may take at most on the GPU machine (bench/gpu/README.md: expected times).
declare -A limit=([unpack]=40 [build]=200 [ctest]=60 [memcheck]=60 [racecheck]=60 [initcheck]=45
                  [synccheck]=45 [bench]=60 [race]=90)

run_step() {
    local name=$1 left t0 rc verdict
    left=$((budget - ($(date +%s) - started) - 15))
    local cap=${limit[$name]} override=LIMIT_$name
    cap=${!override:-$cap}
    [ "$left" -lt "$cap" ] && cap=$left
    if [ "$cap" -lt 5 ]; then
        printf '%-10s skipped (no time left in the %ss budget)\n' "$name" "$budget" | tee -a "$summary"
        return
    fi
    t0=$(date +%s)
    export -f "step_$name" sanitize cuda_tests
    export root prefix build logs jobs usr arch STEP_CAP=$cap
    timeout -k 10 "$cap" bash -c "step_$name" > "$logs/$name.log" 2>&1
    rc=$?
    case $rc in
        0) verdict=passed ;;
        124 | 137) verdict="timed out (limit ${cap}s)" ;;
        3) verdict="skipped ($(tail -1 "$logs/$name.log"))" ;;
        *) verdict="failed (exit $rc)" ;;
    esac
    printf '%-10s %-40s %4ss\n' "$name" "$verdict" "$(($(date +%s) - t0))" | tee -a "$summary"
}

steps=${*:-$all_steps}
for s in $steps; do
    [[ " $all_steps " == *" $s "* ]] || { echo "run.sh: unknown step $s (steps: $all_steps)" >&2; exit 2; }
done
# A later step needs the prefix and the build: redo them first where a fresh machine lacks them.
if [[ " $steps " != *" unpack "* ]] && [ ! -x "$usr/bin/mpicc.openmpi" ]; then steps="unpack $steps"; fi
if [[ " $steps " != *" build "* && " $steps " != " unpack " ]] && [ ! -f "$build/build.ninja" ]; then
    steps="${steps/unpack/unpack build}"; [[ " $steps " == *" build "* ]] || steps="build $steps"
fi
{ echo "bench/gpu/run.sh $steps: $(date -u +%FT%TZ) on $(uname -n), $(nproc) cores; commit $(git rev-parse --short HEAD 2>/dev/null)"
  nvidia-smi -L 2>/dev/null || echo "no GPU visible (nvidia-smi -L failed)"; } | tee -a "$summary"
for s in $steps; do run_step "$s"; done
cp "$summary" "$logs/"
tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$logs"
echo "total $(($(date +%s) - started))s; logs in $out/logs.tar.gz" | tee -a "$summary"
