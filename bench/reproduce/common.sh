# What every chapter's reproduce script shares (sourced): `step FILE COMMAND...` runs one command
# from the repository root into FILE (a path under bench/results/), headed by one line naming the
# date, the commit, the machine and its load, then the command as a "$ " line; the file is replaced
# only when the command succeeds. A failed step is named with the last line it printed, and the
# script's exit status (finish) says so after the other steps have run.

failed_steps=()

# The machine, in words: CPU model, cores, memory.
machine() {
    local cpu cores memory
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | sed 's/  */ /g')
    cores=$(env -u OMP_NUM_THREADS nproc) # nproc alone reports OMP_NUM_THREADS, which scripts set for their runs
    memory=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
    echo "$cores-core $cpu, $memory"
}

step() {
    local file=$1; shift
    local started=$SECONDS header
    header="# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- ref opt cuda datasets verify bench ':!bench/results' || echo ' (with changes)'), $(machine), load $(cut -d' ' -f1-3 /proc/loadavg)"
    mkdir -p "$(dirname "$file")"
    printf '   %-58s ' "$file"
    if { echo "$header"; echo "\$ $*"; "$@" 2>&1; } > "$file.part"; then
        mv "$file.part" "$file"
        echo "ok ($((SECONDS - started)) s)"
    else
        echo "FAILED ($((SECONDS - started)) s): $(tail -n 1 "$file.part")"
        failed_steps+=("$file")
    fi
}

# The script's exit status: 0 when every step succeeded.
finish() {
    [ ${#failed_steps[@]} -eq 0 ] && return 0
    echo "failed: ${failed_steps[*]} (their output kept beside them as .part)"
    return 1
}

