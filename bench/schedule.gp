# Chapter 07's figures from the committed output in bench/results/07-schedule/:
#     gnuplot -e "dir='bench/results/07-schedule'" bench/schedule.gp
# 1. chapters/07-schedule-gantt.svg: the worked example (times 8,7,7,5,4,1 on 2 ranks) as each
#    method schedules it, from gantt.csv (twofold schedule --gantt): one lane per rank, a box per
#    group from its predicted start to its end, coloured by iteration.
# 2. chapters/07-schedule-simulate.svg: simulated efficiency against the rank count
#    (simulate_growth.txt, the table twofold schedule --simulate prints).
# 3. chapters/07-schedule-ilp.svg: the ILP's solve time against the groups, beside Table 6's
#    2 % row (ilp_time.csv).
# 4. chapters/07-schedule-imbalance.svg: predicted against measured busy imbalance per run
#    (imbalance.csv from bench/schedule.sh).
if (!exists("dir")) dir = "bench/results/07-schedule"
set datafile separator ","
set terminal svg size 900,560 font "sans,11" background rgb "white"

# ---- 1. the Gantt charts -----------------------------------------------------------------------
set output "chapters/07-schedule-gantt.svg"
set multiplot layout 4,1 title "times 8, 7, 7, 5, 4, 1 (groups 0..5) on 2 ranks, at most 2 per rank and iteration"
set xrange [0:20]
set yrange [-0.6:1.6]
set ytics ("rank 0" 0, "rank 1" 1)
set grid xtics
set style fill solid 0.6 border -1
unset key
set lmargin 9
methods = "roundrobin lpt greedy ilp"
do for [m in methods] {
    set title m." (epoch ".(m eq "ilp" ? "16 = sum t / G" : "19").")" offset 0,-0.8
    plot dir."/gantt.csv" using (strcol(1) eq m ? ($5 + $6) / 2 : NaN):3:5:6:($3 - 0.35):($3 + 0.35):2 \
             with boxxyerror lc variable, \
         "" using (strcol(1) eq m ? ($5 + $6) / 2 : NaN):3:(sprintf("g%d", $4)) with labels
}
unset multiplot

# ---- 2. simulated efficiency: the growing graph's table in simulate_growth.txt ------------------
reset
set datafile separator whitespace
set terminal svg size 700,420 font "sans,11" background rgb "white"
set output "chapters/07-schedule-simulate.svg"
set title "simulated efficiency, growing graph's sizes cycled to 4096 groups, alpha 0"
set logscale x 2
set xlabel "ranks G"
set ylabel "efficiency sum t / (G x critical path)"
set yrange [0:1.05]
set grid
set key bottom left
rows(m) = sprintf("< awk '$3 == \"%s\" && $1 + 0 > 0' %s/simulate_growth.txt", m, dir)
plot rows("roundrobin") using 1:5 with linespoints title "round-robin (PSG)", \
     rows("lpt") using 1:5 with linespoints title "LPT", \
     rows("greedy") using 1:5 with linespoints title "greedy (DyGNeX-G)"

# ---- 3. ILP solve time -------------------------------------------------------------------------
reset
set datafile separator ","
set terminal svg size 700,420 font "sans,11" background rgb "white"
set output "chapters/07-schedule-ilp.svg"
set title "DyGNeX-L solve time, G = 4, gap 2 %: GLPK here, Gurobi in Table 6"
set xlabel "groups"
set ylabel "seconds"
set grid
set key top left
plot dir."/ilp_time.csv" using 1:2 with linespoints title "GLPK (30 s limit)", \
     "" using 1:7 with linespoints title "Table 6, 2 % row"

# ---- 4. imbalance ------------------------------------------------------------------------------
reset
set datafile separator ","
set terminal svg size 700,420 font "sans,11" background rgb "white"
set output "chapters/07-schedule-imbalance.svg"
set title "busy imbalance (max / min rank total): predicted by the cost model vs measured"
set xlabel "predicted"
set ylabel "measured"
set grid
set key top left
f(x) = x
runs(m) = sprintf("< awk -F, '$4 == \"%s\"' %s/imbalance.csv", m, dir)
plot runs("roundrobin") using 5:6 with points pt 7 title "round-robin", \
     runs("lpt") using 5:6 with points pt 5 title "LPT", \
     runs("greedy") using 5:6 with points pt 9 title "greedy", \
     runs("ilp") using 5:6 with points pt 11 title "ILP", \
     f(x) with lines dt 2 lc rgb "gray" title "measured = predicted"
