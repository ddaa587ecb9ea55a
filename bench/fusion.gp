# Chapter 03's figure from the CSV of `bench fusion`:
#     build/bench/bench fusion --out bench_out && gnuplot -e "dir='bench_out'" bench/fusion.gp
# Left: computed steps per useful step (padding wastes, fused lanes compute exactly the useful
# ones). Right: one forward + backward of the GRU time encoder, per-sequence reference, padded,
# fused (ms, log scale). The CSV has a GRU row then an LSTM row per data set; the figure takes
# the GRU rows.
if (!exists("dir")) dir = "bench_out"
if (!exists("out")) out = "chapters/03-fusion.svg"
set terminal svg size 1100,400 font "sans,11" background rgb "white"
set output out
set datafile separator ","
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0 font ",8"
set bmargin 3
set logscale y
set grid ytics
set key top right
set multiplot layout 1,2
set title "computed steps / useful steps"
set yrange [0.8:*]
plot dir."/fusion_temporal.csv" every 2::1 using 6:xtic(1) title "zero-padded" lc rgb "#d95f02", \
     "" every 2::1 using 7 title "fused lanes" lc rgb "#1b9e77"
set title "GRU forward + backward, ms (log scale)"
set yrange [*:*]
plot dir."/fusion_temporal.csv" every 2::1 using 13:xtic(1) title "per-sequence ref" lc rgb "#7570b3", \
     "" every 2::1 using 14 title "zero-padded" lc rgb "#d95f02", \
     "" every 2::1 using 15 title "fused lanes" lc rgb "#1b9e77"
unset multiplot
