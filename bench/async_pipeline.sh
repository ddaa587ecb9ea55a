#!/usr/bin/env bash
# Chapter 05a's Sven pipelining measurement: build/bench/bench_async_pipeline (bench/async_pipeline.c)
# on R MPI ranks, the distributed event trainer plain, with prefetching, micro-batches, stale
# gradients and all three; validated before timed (bytes exact, prefetching bitwise; #wrong 0).
# The output goes to pipeline.txt (another model: pipeline_MODEL_configurations.txt) in OUT
# (default bench/results/05-async) with the command, the date, the machine and its load on top.
#
#   bench/async_pipeline.sh [RANKS [EPOCHS [DATA [MODEL [BATCHES [KERNELS]]]]]]
#       (default: "2 4" 3 generated 10000 events, tgn, no BATCHES, ref kernels)
#
# With BATCHES (e.g. "200 600 1000 2000") it runs the micro-batch sweep instead, n = 1..4 per batch
# size beside Sven's measured optimum, into pipeline_MODEL.txt (KERNELS opt, the BLAS twins:
# pipeline_MODEL_opt_kernels.txt); the load is printed before each batch.
set -euo pipefail
cd "$(dirname "$0")/.."
ranks=${1:-"2 4"}
epochs=${2:-3}
data=${3:-events:nodes=2000,events=10000,repeat=0.5,features=4,seed=5}
model=${4:-tgn}
batches=${5:-}
kernels=${6:-ref}
out=${OUT:-bench/results/05-async}
bench=${BENCH:-build/bench/bench_async_pipeline}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$out"
if [ -n "$batches" ]; then
  {
    echo "# bench/async_pipeline.sh \"$ranks\" $epochs $data $model \"$batches\" $kernels"
    echo "# on $(date -u '+%Y-%m-%d %H:%M UTC'): $(lscpu | sed -n 's/^Model name: *//p'), $(getconf _NPROCESSORS_ONLN) cores;" \
         "times are indicative (the cores are shared with other jobs; the load is printed before each run), bytes exact"
    for r in $ranks; do
      for b in $batches; do
        echo
        echo "# load average $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "\$ mpiexec -n $r --oversubscribe --bind-to none $bench --data $data --epochs $epochs --width 32 --batch $b --model $model --kernels $kernels --micro-batch-sweep"
        mpiexec -n "$r" --oversubscribe --bind-to none "$bench" --data "$data" --epochs "$epochs" --width 32 --batch "$b" \
          --model "$model" --kernels "$kernels" --micro-batch-sweep
      done
    done
  } 2>&1 | tee "$out/pipeline_$model$([ "$kernels" = ref ] || echo "_${kernels}_kernels").txt"
  exit "${PIPESTATUS[0]}"
fi
model_option="" name=pipeline.txt # TGN's table keeps its name; another model's gets its own
[ "$model" = tgn ] || { model_option=" --model $model"; name=pipeline_${model}_configurations.txt; }
{
  echo "# bench/async_pipeline.sh \"$ranks\" $epochs $data"
  echo "# on $(date -u '+%Y-%m-%d %H:%M UTC'): $(lscpu | sed -n 's/^Model name: *//p'), $(getconf _NPROCESSORS_ONLN) cores;" \
       "load average $(cut -d' ' -f1-3 /proc/loadavg) (the cores were shared with other jobs: times are indicative," \
       "bytes exact)"
  for r in $ranks; do
    echo
    echo "\$ mpiexec -n $r --oversubscribe --bind-to none $bench --data $data --epochs $epochs --width 32 --batch 200$model_option"
    mpiexec -n "$r" --oversubscribe --bind-to none "$bench" --data "$data" --epochs "$epochs" --width 32 --batch 200$model_option
  done
} 2>&1 | tee "$out/$name"
