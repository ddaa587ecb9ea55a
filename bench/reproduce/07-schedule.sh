#!/usr/bin/env bash
# Chapter 07's output blocks and figures. First the quick part: the worked example (and its Gantt
# data), the tests whose lines the chapter quotes, the model matrix; then the long part: the
# solve-time and lower-bound benchmark, the simulator on 4,096 groups, the hybrid-batch race and
# bench/schedule.sh's 18 trained runs (measured imbalance); last the four figures, drawn by
# bench/schedule.gp from what the steps wrote. REPRODUCE_SKIP_LONG=1 stops before the long part (the figures
# are still drawn, from the committed long results).
#
#   [REPRODUCE_SKIP_LONG=1] bench/reproduce/07-schedule.sh
#
# takes: about 5 minutes with REPRODUCE_SKIP_LONG=1; the long part 17 minutes on 2 shared cores (Intel Xeon) at load average 4.5-4.9 at each step's start (the solve times 361 s, the growth simulation 44 s, the hybrid race 173 s, bench/schedule.sh 456 s)
set -uo pipefail
. "$(dirname "$0")/common.sh"
out=bench/results/07-schedule
tests_env=(env TWOFOLD_DATASETS=datasets CK_FORK=no)

# ---- quick ------------------------------------------------------------------------------------
step $out/worked_example.txt build/twofold schedule --times 8,7,7,5,4,1 --ranks 2 --print-schedule --gantt $out/gantt.csv
step $out/test_schedule.txt "${tests_env[@]}" CK_RUN_SUITE=schedule build/verify/test_schedule
step $out/test_schedule_hybrid.txt "${tests_env[@]}" build/verify/test_schedule_hybrid
for ranks in 1 2 3 4; do
    step $out/test_schedule_mpi_$ranks.txt "${tests_env[@]}" OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec -n $ranks --oversubscribe build/verify/test_schedule_mpi
done
step $out/verify_models.txt build/twofold verify schedule schedule_hybrid incremental_train --data pedalme

# ---- long -------------------------------------------------------------------------------------
if [ "${REPRODUCE_SKIP_LONG:-0}" != 1 ]; then
    step $out/output.txt build/bench/bench schedule --out $out
    # The cost: a least-squares fit bench/schedule.sh measured on the growing graph (3 ranks), fixed here so
    # that the simulation repeats from run to run.
    step $out/simulate_growth.txt build/twofold schedule --data powerlaw:nodes=2000,edges=20000,snapshots=64,growth=8 \
        --ranks 4 --method lpt --cost linear:1.395e-6,8.181e-8,6.199e-4 --model gconvgru --hidden 16 --simulate
    step $out/hybrid.txt build/bench/bench hybrid --out $out
    # Writes schedule_runs.txt, imbalance.csv and imbalance_summary.txt itself; its log beside them.
    step $out/schedule_sh.txt bench/schedule.sh $out 2
fi

# ---- figures ------------------------------------------------------------------------------------
step $out/figures.txt gnuplot -e "dir='$out'" bench/schedule.gp
finish
