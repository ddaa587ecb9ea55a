# Plots the CSV files of `bench incremental` into the chapter's figures:
#   build/bench/bench incremental --out bench_out
#   gnuplot -e "dir='bench_out'; out='chapters'" bench/incremental.gp
if (!exists("dir")) dir = 'bench_out'
if (!exists("out")) out = 'chapters'
set datafile separator ','
set terminal svg size 720,440 dynamic font 'sans,12'
set key top left
set grid

set output out.'/02-incremental-churn.svg'
set title 'Aggregation time per snapshot against churn (10^6 edges, 16 features)'
set logscale xy
set xlabel 'churn: fraction of edges replaced and of vertices with new features per step'
set ylabel 'milliseconds per snapshot'
pick(name, column) = strcol(1) eq name ? column(column) * 1e3 : NaN
plot dir.'/churn.csv' using 2:(pick('sum', 4)) every ::1 with linespoints title 'ref full recompute (sum)', \
     ''               using 2:(pick('sum', 5)) every ::1 with linespoints title 'opt full recompute (sum)', \
     ''               using 2:(pick('sum', 6)) every ::1 with linespoints title 'opt incremental: sum', \
     ''               using 2:(pick('symmetric', 6)) every ::1 with linespoints title 'opt incremental: symmetric (GCN)', \
     ''               using 2:(pick('max', 6)) every ::1 with linespoints title 'opt incremental: max'

set output out.'/02-incremental-cache.svg'
set title "Global cache hit rate against capacity (ReInc's encoder-decoder trace)"
unset logscale
set key bottom right
set xlabel 'cache size, % of all input aggregations'
set ylabel 'hit rate, % of the accesses that can hit'
set yrange [0:105]
plot dir.'/cache.csv' using ($1*100):($2*100) every ::1 with linespoints title "ReInc's F/S - I", \
     ''               using ($1*100):($3*100) every ::1 with linespoints title 'LRU'
