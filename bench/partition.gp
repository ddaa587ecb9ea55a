# Chapter 06's result figures (06a and 06b) from bench partition's metrics.csv and bench/partition.sh's balance.csv:
#     build/bench/bench partition --out DIR && bench/partition.sh DIR && gnuplot -e "dir='DIR'" bench/partition.gp
# 06a-partitioners-cut.svg: edge cut (% of edge occurrences) against R, one line per partitioner, on
# twitter_tennis and the generated 10^6-edge graph. 06b-partitioned-training-bytes.svg: exchange
# bytes per epoch (T-GCN and GC-LSTM, H = 32, windows of 8, counted from the graph) and the cache's
# replication (depth 1; GC-LSTM's depth for windows of 8) against R on twitter_tennis. 06a-partitioners-balance.svg:
# measured busy-time max/mean (each repeat) beside the predicted DynaHB load max/mean, hash and dynahb.
if (!exists("dir")) dir = "bench/results/06-partition"
metrics = dir."/metrics.csv"
set terminal svg size 1100,400 font "sans,11" background rgb "white" noenhanced
set datafile separator ","
set logscale x 2
set grid
set key outside right top font ",9"
set xlabel "ranks R"
methods = "hash pts metis dynahb dgc"
colours = "#7570b3 #e7298a #1b9e77 #d95f02 #66a61e"
rows(data, method) = sprintf("< awk -F, '$1==\"%s\" && $2==\"%s\"' %s", data, method, metrics)

set output "chapters/06a-partitioners-cut.svg"
set multiplot layout 1,2
set ylabel "edge cut, % of edge occurrences"
set yrange [0:100]
do for [data in "twitter_tennis powerlaw_1e6"] {
    set title data
    plot for [i=1:5] rows(data, word(methods, i)) using 3:4 with linespoints lw 2 lc rgb word(colours, i) \
         title word(methods, i)
}
unset multiplot

set output "chapters/06b-partitioned-training-bytes.svg"
set multiplot layout 1,2
set title "twitter_tennis: exchange bytes per epoch (counted)"
set ylabel "bytes per epoch"
set logscale y
set yrange [*:*]
plot for [i=1:5] rows("twitter_tennis", word(methods, i)) using 3:11 with linespoints lw 2 lc rgb word(colours, i) \
         title word(methods, i)." T-GCN", \
     for [i=1:5] rows("twitter_tennis", word(methods, i)) using 3:12 with linespoints lw 2 dt 2 \
         lc rgb word(colours, i) title word(methods, i)." GC-LSTM"
set title "twitter_tennis: cache mode, rows held per vertex"
set ylabel "replication"
unset logscale y
plot for [i=1:5] rows("twitter_tennis", word(methods, i)) using 3:9 with linespoints lw 2 lc rgb word(colours, i) \
         title word(methods, i)." depth 1", \
     for [i=1:5] rows("twitter_tennis", word(methods, i)) using 3:10 with linespoints lw 2 dt 2 \
         lc rgb word(colours, i) title word(methods, i)." GC-LSTM depth 7"
unset multiplot

set output "chapters/06a-partitioners-balance.svg"
unset logscale x
set xlabel "ranks and repeat"
set ylabel "max / mean over ranks"
set title "T-GCN cache mode: measured busy time (points) and predicted DynaHB load (line)"
set yrange [1:*]
set xtics 1 font ",9"
balance(method) = sprintf("< awk -F, 'NR > 1 && $2==\"%s\"' %s/balance.csv", method, dir)
plot balance("hash") using 0:4:xtic(sprintf("R=%d run %d", $1, $3)) with points pt 7 ps 1.2 lc rgb "#7570b3" title "hash busy", \
     balance("hash") using 0:5 with lines lw 2 lc rgb "#7570b3" title "hash predicted", \
     balance("dynahb") using 0:4 with points pt 5 ps 1.2 lc rgb "#d95f02" title "dynahb busy", \
     balance("dynahb") using 0:5 with lines lw 2 lc rgb "#d95f02" title "dynahb predicted"
